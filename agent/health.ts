/**
 * The agent's /healthz: 200 while it is registered with a collector, 503 while
 * it is (re)connecting. Bound by main only; port 0 in config turns it off.
 */
import { createServer, type Server } from 'node:http';

export interface HealthState {
  connected: () => boolean;
  runningJobs: () => number;
  outboxPending: () => number;
  outboxDropped: () => number;
}

export function createHealthServer(state: HealthState): Server {
  return createServer((req, res) => {
    if (req.url !== '/healthz') {
      res.writeHead(404).end();
      return;
    }
    const ok = state.connected();
    const body = JSON.stringify({
      status: ok ? 'ok' : 'connecting',
      runningJobs: state.runningJobs(),
      outboxPending: state.outboxPending(),
      outboxDropped: state.outboxDropped(),
    });
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(body);
  });
}
