/**
 * fortio's HTTP mode: load (`fortio load http://`) read through its `-json -`
 * report, and `fortio server` as the HTTP far end. The flags and the report's
 * common part are in fortio-load.ts. Built by scripts/build-go-tools.sh.
 */
import type { HttpLoadResult, Measurement } from '../../gen/cnibench/v1/agent.js';
import type { ClientDriver, ClientSpec, ServerDriver, ServerSpec } from './driver.js';
import { failed, loadArgs, parseFortioRun, SOCKET_ERROR } from './fortio-load.js';

/**
 * fortio's HTTP report as our HttpLoadResult. Status codes outside 200-399
 * are non-2xx (fortio itself also accepts 418). fortio puts every transport
 * failure under one code, -1, without saying which step failed; they are
 * counted as connect errors, because a -1 always involves a fresh connection
 * (fortio retries a failed reused connection once on a new one before giving
 * up, and after a failure the next request must connect). Those failed
 * attempts are left out of `requests` and `requestsPerSecond` (fortio's own
 * ActualQPS counts them; they are equal when there are none), so a target
 * refusing connections quickly never looks fast; the latency histogram,
 * which fortio keeps for all calls, still includes them.
 */
export function parseFortioHttpJson(stdout: string): HttpLoadResult {
  const run = parseFortioRun('fortio', stdout);
  let non2xx = 0;
  let socket = 0;
  for (const [code, n] of Object.entries(run.retCodes)) {
    const status = Number(code);
    if (code === SOCKET_ERROR) socket += n;
    else if (!(status >= 200 && status <= 399)) non2xx += n;
  }
  const requests = run.calls - socket;
  if (requests <= 0) {
    throw failed(
      'fortio',
      `no HTTP response in ${run.calls} attempts (${socket} socket errors: connection refused, reset or timed out)`,
      run.retCodes,
    );
  }
  return {
    connections: run.connections,
    keepalive: run.doc.DisableKeepAlive !== true,
    seconds: run.seconds,
    requests,
    requestsPerSecond: requests / run.seconds,
    non2xx,
    socketErrors: { connect: socket, read: 0, write: 0, timeout: 0 },
    latency: run.latency,
    histogram: run.histogram,
    targetQps: run.targetQps,
    latencyFromIntendedStart: false,
    sendLagMeanUs: 0,
  };
}

function httpPath(spec: ClientSpec): string {
  return spec.path?.startsWith('/') ? spec.path : `/${spec.path ?? ''}`;
}

/** The ports `fortio server` would open besides -http-port, all turned off. */
const SERVER_OFF = [
  '-grpc-port',
  'disabled',
  '-redirect-port',
  'disabled',
  '-tcp-port',
  'disabled',
  '-udp-port',
  'disabled',
];

/**
 * HTTP load (`fortio load`) against `fortio server`, which here opens only its
 * http-echo port: no gRPC, redirect, tcp/udp echo listeners, and no UI, REST
 * API (which could start loads on request) or debug pages.
 */
export const fortio: ClientDriver & ServerDriver = {
  tool: 'fortio',
  buildClientArgs(spec: ClientSpec): string[] {
    return [
      ...loadArgs(spec),
      ...(spec.keepalive === false ? ['-keepalive=false'] : []),
      `http://${spec.targetHost}:${spec.targetPort}${httpPath(spec)}`,
    ];
  },
  buildServerArgs(spec: ServerSpec): string[] {
    return ['server', '-http-port', String(spec.port), ...SERVER_OFF, '-ui-path=', '-echo-debug-path='];
  },
  parse(stdout: string): Measurement {
    return { kind: { $case: 'http', value: parseFortioHttpJson(stdout) } };
  },
};
