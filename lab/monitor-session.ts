/**
 * A lab in monitoring mode with its collector in this process, once every
 * agent is connected: the session behind `cni-bench lab monitor`, the
 * monitoring tests and `bench:monitor-cost`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Collector, collectorConfig, startCollector } from '../collector/index.js';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { Lab, type LabMonitorOptions } from './lab.js';
import type { LabProxyOptions } from './proxy.js';

export interface MonitorLabOptions {
  nodes: number;
  /** Lab id (default random). */
  id?: string;
  monitor: LabMonitorOptions;
  proxy?: LabProxyOptions;
  dbPath: string;
  agentWaitMs: number;
  /** Runs once the lab exists, before agents start. */
  beforeAgents?: (lab: Lab) => Promise<void>;
}

export interface MonitorLab {
  lab: Lab;
  collector: Collector;
  /** Stops the collector and removes the lab. Never throws. */
  close(): Promise<void>;
}

/** A lab in monitoring mode with its collector, once every agent is connected. */
export async function startMonitorLab(opts: MonitorLabOptions, log: Logger): Promise<MonitorLab> {
  const lab = await Lab.create({
    nodes: opts.nodes,
    log,
    monitor: opts.monitor,
    ...(opts.id ? { id: opts.id } : {}),
    ...(opts.proxy ? { proxy: opts.proxy } : {}),
  });
  let collector: Collector | undefined;
  const close = async (): Promise<void> => {
    await collector
      ?.close()
      .catch((err: unknown) => log.error('collector close failed', { error: (err as Error).message }));
    await lab.destroy().catch((err: unknown) => log.error('lab teardown failed', { error: (err as Error).message }));
  };
  try {
    collector = await startCollector(
      collectorConfig({
        grpcListen: `unix:${lab.controlSocket}`,
        httpHost: '127.0.0.1',
        httpPort: 0,
        dbPath: opts.dbPath,
        heartbeatIntervalMs: 1000,
        livenessTimeoutMs: 30_000,
      }),
      log,
      lab.services,
    );
    await opts.beforeAgents?.(lab);
    lab.startAgents(collector.grpcAddress);
    const c = collector;
    const deadline = Date.now() + opts.agentWaitMs;
    while (c.registry.available().length < lab.agentCount) {
      if (Date.now() > deadline)
        throw new CniBenchError(
          ErrorCodes.NO_AGENTS,
          `only ${c.registry.available().length} of ${lab.agentCount} lab agents connected within ${opts.agentWaitMs} ms`,
        );
      await sleep(100);
    }
    return { lab, collector: c, close };
  } catch (err) {
    await close();
    throw err;
  }
}
