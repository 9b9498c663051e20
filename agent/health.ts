/**
 * The agent's /healthz: 200 while it is registered with a collector, 503 while
 * it is (re)connecting; and /metrics, the agent's Prometheus metrics (probe
 * and dataplane gauges in monitoring mode). Bound by main only; port 0 in
 * config turns it off.
 */
import { createServer, type Server } from 'node:http';

export interface HealthState {
  connected: () => boolean;
  runningJobs: () => number;
  outboxPending: () => number;
  outboxDropped: () => number;
  /** The Prometheus exposition, when the agent exports metrics. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
}

export function createHealthServer(state: HealthState): Server {
  return createServer((req, res) => {
    if (req.url === '/metrics' && state.metrics) {
      state.metrics().then(
        (m) => res.writeHead(200, { 'content-type': m.contentType }).end(m.body),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(err as Error).message}\n`),
      );
      return;
    }
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
