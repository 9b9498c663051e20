/**
 * Driver of the built-in TCP request/response server,
 * agent/builtins/tcp-echo.ts, run with the agent's own Node binary: the far
 * end of the built-in tcp-rr client, sizes and mode set by each connection's
 * preamble (agent/builtins/tcp-rr-wire.ts).
 */
import { builtinScript } from './builtin-args.js';
import type { ServerDriver, ServerSpec } from './driver.js';

const script = builtinScript('tcp-echo');

export const tcpEcho: ServerDriver = {
  tool: 'tcp-echo',
  buildServerArgs(spec: ServerSpec): string[] {
    return [script, '--port', String(spec.port)];
  },
};
