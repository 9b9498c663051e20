/** netserver, netperf's server (netperf.ts drives the client). */
import type { ServerDriver, ServerSpec } from './driver.js';

/**
 * netserver in the foreground (`-D`), IPv4 on every address as the other
 * servers listen, `-N` so each forked test child writes no
 * /tmp/netserver.debug_<pid> (the agent's root filesystem is read-only).
 */
export const netserver: ServerDriver = {
  tool: 'netserver',
  buildServerArgs(spec: ServerSpec): string[] {
    return ['-D', '-N', '-L', '0.0.0.0,inet', '-p', String(spec.port)];
  },
};
