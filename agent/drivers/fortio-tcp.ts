/**
 * fortio's TCP mode: TCP_RR (`fortio load tcp://`) over kept connections
 * against `fortio tcp-echo`, read through its `-json -` report (fortio-load.ts
 * has the flags and the report's common part). fortio never opens a
 * connection per transaction, so TCP_CRR is refused.
 */
import { CniBenchError, ErrorCodes, parseError } from '../../core/errors.js';
import type { Measurement, RequestResponseResult } from '../../gen/cnibench/v1/agent.js';
import type { ClientDriver, ClientSpec, ServerDriver, ServerSpec } from './driver.js';
import { failed, loadArgs, parseFortioRun } from './fortio-load.js';

/**
 * fortio's tcp:// report (TCP_RR over `-c` kept connections) as our
 * RequestResponseResult. fortio sends a 24-byte payload and checks the echo;
 * any other outcome (short read, mismatch, connect error) is an error keyed
 * by its message in RetCodes.
 */
export function parseFortioTcpJson(stdout: string): RequestResponseResult {
  const run = parseFortioRun('fortio-tcp', stdout);
  if (run.doc.RunType !== 'TCP')
    throw parseError('fortio-tcp', stdout, `RunType is ${JSON.stringify(run.doc.RunType)}, not "TCP"`);
  const ok = run.retCodes.OK ?? 0;
  const errors = Object.entries(run.retCodes).reduce((sum, [k, n]) => (k === 'OK' ? sum : sum + n), 0);
  if (ok <= 0)
    throw failed(
      'fortio-tcp',
      `no transaction succeeded in ${run.calls} attempts: ${JSON.stringify(run.retCodes)}`,
      run.retCodes,
    );
  return {
    connectPerTransaction: false,
    connections: run.connections,
    seconds: run.seconds,
    transactions: ok,
    transactionsPerSecond: ok / run.seconds,
    errors,
    latency: run.latency,
    histogram: run.histogram,
  };
}

/** TCP_RR (`fortio load tcp://`) against `fortio tcp-echo`. */
export const fortioTcp: ClientDriver & ServerDriver = {
  tool: 'fortio-tcp',
  buildClientArgs(spec: ClientSpec): string[] {
    if (spec.keepalive === false) {
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        'fortio-tcp: cannot open a connection per transaction (TCP_CRR); fortio keeps one TCP connection per -c',
        { details: { field: 'keepalive', tool: 'fortio-tcp' } },
      );
    }
    return [...loadArgs(spec), `tcp://${spec.targetHost}:${spec.targetPort}`];
  },
  buildServerArgs(spec: ServerSpec): string[] {
    return ['tcp-echo', '-tcp-port', String(spec.port)];
  },
  parse(stdout: string): Measurement {
    return { kind: { $case: 'rr', value: parseFortioTcpJson(stdout) } };
  },
};
