/**
 * The collector a lab session runs in this process and how its agents join
 * it, shared by the run sessions (session.ts) and monitoring (monitor-session.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Collector, collectorConfig, startCollector } from '../collector/index.js';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { ServiceFrontend } from '../core/service-frontend.js';
import type { Lab } from './lab.js';

/**
 * Lab agents share two cores with the kernel work of programming tens of
 * thousands of rules; a sweep step starved them of CPU for more than 8 s and
 * the collector declared them lost. Lab links are local: a long timeout costs nothing.
 */
const LAB_LIVENESS_TIMEOUT_MS = 30_000;

/**
 * The collector for `lab`: agents' gRPC on the lab's control socket, REST on a free loopback port; its Service
 * frontend the lab's own, or `frontend` (a Kubernetes frontend against the apiserver a lab's real kube-proxy watches).
 */
export function startLabCollector(
  lab: Lab,
  dbPath: string,
  log: Logger,
  frontend: ServiceFrontend = lab.services,
): Promise<Collector> {
  return startCollector(
    collectorConfig({
      grpcListen: `unix:${lab.controlSocket}`,
      httpHost: '127.0.0.1',
      httpPort: 0,
      dbPath,
      heartbeatIntervalMs: 1000,
      livenessTimeoutMs: LAB_LIVENESS_TIMEOUT_MS,
      // Every agent speaks only for its own node, as in a cluster (lab/agent-identity.ts).
      agentKeyFile: lab.agentKeyFile,
    }),
    log,
    frontend,
  );
}

/** Runs `beforeAgents`, starts the lab's agents against `c` and waits until every one is connected. */
export async function connectLabAgents(
  lab: Lab,
  c: Collector,
  o: { agentWaitMs: number; beforeAgents?: ((lab: Lab) => Promise<void>) | undefined },
  signal?: AbortSignal,
): Promise<void> {
  await o.beforeAgents?.(lab);
  lab.startAgents(c.grpcAddress);
  const n = lab.agentCount;
  const deadline = Date.now() + o.agentWaitMs;
  while (c.registry.available().length < n) {
    if (signal?.aborted) throw new CniBenchError(ErrorCodes.CANCELLED, 'interrupted while waiting for agents');
    if (Date.now() > deadline) {
      throw new CniBenchError(
        ErrorCodes.NO_AGENTS,
        `only ${c.registry.available().length} of ${n} lab agents connected within ${o.agentWaitMs} ms`,
      );
    }
    await sleep(100);
  }
}

/** Stops the collector, then removes the lab; logs what fails and never throws. */
export async function closeLabSession(lab: Lab | undefined, c: Collector | undefined, log: Logger): Promise<void> {
  await c?.close().catch((err: unknown) => log.error('collector close failed', { error: (err as Error).message }));
  await lab?.destroy().catch((err: unknown) => log.error('lab teardown failed', { error: (err as Error).message }));
}
