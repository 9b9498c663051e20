/**
 * Driver for the built-in HTTP echo server (agent/servers/http-echo.ts). It is
 * started with the same Node binary that runs the agent.
 */
import { fileURLToPath } from 'node:url';
import type { ServerDriver, ServerSpec } from './driver.js';

const script = fileURLToPath(new URL('../servers/http-echo.js', import.meta.url));

export const httpEcho: ServerDriver = {
  tool: 'http-echo',
  binary: process.execPath,
  buildServerArgs(spec: ServerSpec): string[] {
    return [script, '--port', String(spec.port)];
  },
};
