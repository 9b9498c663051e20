/**
 * A real collector in this process and real agent processes, all on
 * 127.0.0.1 (no root, no namespaces): the set-up the gRPC, TLS, identity and
 * monitoring tests share. Heartbeats every 500 ms so a lost agent shows within
 * seconds.
 */
import { collectorConfig } from '../../../collector/config.js';
import { type Collector, startCollector } from '../../../collector/index.js';
import type { Logger } from '../../../core/log.js';
import { AGENT_MAIN, type Proc, startNode } from './procs.js';

/** A collector on loopback port 0 with an in-memory store unless `extra` says otherwise. */
export function startLoopbackCollector(
  log: Logger,
  extra: Partial<Parameters<typeof collectorConfig>[0]> = {},
): Promise<Collector> {
  return startCollector(
    collectorConfig({
      grpcListen: '127.0.0.1:0',
      httpHost: '127.0.0.1',
      httpPort: 0,
      dbPath: ':memory:',
      heartbeatIntervalMs: 500,
      livenessTimeoutMs: 3000,
      ...extra,
    }),
    log,
  );
}

/** The agent's flags for `node` on this host: pod IP 127.0.0.1, its health port `healthPort`, plus `extra`. */
export function loopbackAgentArgs(collector: string, node: string, healthPort: number, extra: string[] = []): string[] {
  return [
    '--collector',
    collector,
    '--node-name',
    node,
    '--pod-ip',
    '127.0.0.1',
    '--health-port',
    String(healthPort),
    ...extra,
  ];
}

/** A real agent process for `node`, pod IP 127.0.0.1, its health port `healthPort`, plus `extra` flags. */
export function startLoopbackAgent(
  collector: string,
  node: string,
  healthPort: number,
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Proc {
  return startNode(AGENT_MAIN, loopbackAgentArgs(collector, node, healthPort, extra), env);
}
