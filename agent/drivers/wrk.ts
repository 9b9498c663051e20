/**
 * wrk: HTTP load at maximum rate over a fixed number of connections, keep-alive
 * or one connection per request (`Connection: close`, the study's "short
 * connection" mode). wrk has no machine-readable output, so its summary text is
 * parsed strictly: a missing summary is an error, never zero requests.
 */
import { CniBenchError, ErrorCodes, parseError } from '../../core/errors.js';
import type { HttpLoadResult, Measurement } from '../../gen/cnibench/v1/agent.js';
import type { ClientDriver, ClientSpec } from './driver.js';
import { wholeSeconds } from './iperf3.js';

const UNIT_US: Record<string, number> = { us: 1, ms: 1e3, s: 1e6, m: 60e6, h: 3600e6 };

/** "1.52ms" -> 1520 (microseconds). */
export function durationToUs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m|h)$/.exec(text.trim());
  const unit = m?.[2];
  if (!m || !unit) throw new Error(`not a wrk duration: '${text}'`);
  return Number(m[1]) * (UNIT_US[unit] ?? NaN);
}

export function parseWrkOutput(stdout: string): HttpLoadResult {
  const summary = /^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h),/m.exec(stdout);
  if (!summary) {
    const failed = /^unable to connect to .*$/m.exec(stdout);
    if (failed) throw new CniBenchError(ErrorCodes.TOOL_FAILED, `wrk: ${failed[0]}`, { details: { tool: 'wrk' } });
    throw parseError('wrk', stdout, "no 'N requests in T' summary line");
  }
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(stdout);
  const conns = /(\d+) threads and (\d+) connections/.exec(stdout);
  const lat = /^\s*Latency\s+([\d.]+\w+)\s+([\d.]+\w+)\s+([\d.]+\w+)/m.exec(stdout);
  if (!rps || !conns) throw parseError('wrk', stdout, "missing 'Requests/sec' or 'threads and connections'");
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(stdout);
  try {
    const percentiles = [...stdout.matchAll(/^\s+(50|75|90|99(?:\.\d+)?)%\s+([\d.]+\w+)\s*$/gm)].map((m) => ({
      percentile: Number(m[1]),
      valueUs: durationToUs(m[2] ?? ''),
    }));
    return {
      connections: Number(conns[2]),
      keepalive: false,
      seconds: durationToUs(`${summary[2]}${summary[3]}`) / 1e6,
      requests: Number(summary[1]),
      requestsPerSecond: Number(rps[1]),
      non2xx: non2xx ? Number(non2xx[1]) : 0,
      socketErrors: socket
        ? { connect: Number(socket[1]), read: Number(socket[2]), write: Number(socket[3]), timeout: Number(socket[4]) }
        : { connect: 0, read: 0, write: 0, timeout: 0 },
      latency: lat
        ? { meanUs: durationToUs(lat[1] ?? ''), stdevUs: durationToUs(lat[2] ?? ''), maxUs: durationToUs(lat[3] ?? ''), percentiles }
        : { meanUs: 0, stdevUs: 0, maxUs: 0, percentiles },
    };
  } catch (err) {
    throw parseError('wrk', stdout, (err as Error).message);
  }
}

export const wrk: ClientDriver = {
  tool: 'wrk',
  binary: 'wrk',
  kind: 'http',
  buildClientArgs(spec: ClientSpec): string[] {
    const connections = spec.connections ?? 64;
    const threads = Math.min(spec.threads ?? 2, connections);
    const path = spec.path && spec.path.startsWith('/') ? spec.path : `/${spec.path ?? ''}`;
    return [
      '-t', String(threads),
      '-c', String(connections),
      '-d', `${wholeSeconds(spec.durationSeconds)}s`,
      '--latency',
      '--timeout', '5s',
      ...(spec.keepalive === false ? ['-H', 'Connection: close'] : []),
      `http://${spec.targetHost}:${spec.targetPort}${path}`,
    ];
  },
  parse(stdout: string, spec: ClientSpec): Measurement {
    const result = parseWrkOutput(stdout);
    result.keepalive = spec.keepalive ?? true;
    return { kind: { $case: 'http', value: result } };
  },
};
