/**
 * Driver for the built-in HTTP echo server (agent/builtins/http-echo.ts). It is
 * started with the same Node binary that runs the agent.
 */
import { builtinScript } from './builtin-args.js';
import type { ServerDriver, ServerSpec } from './driver.js';

const script = builtinScript('http-echo');

export const httpEcho: ServerDriver = {
  tool: 'http-echo',
  buildServerArgs(spec: ServerSpec): string[] {
    return [script, '--port', String(spec.port)];
  },
};
