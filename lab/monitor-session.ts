/**
 * A lab in monitoring mode with its collector in this process, once every
 * agent is connected: the session behind `cni-bench lab monitor`, the
 * monitoring tests and `bench:monitor-cost`.
 */
import type { Collector } from '../collector/index.js';
import type { Logger } from '../core/log.js';
import { Lab, type LabMonitorOptions } from './lab.js';
import { closeLabSession, connectLabAgents, startLabCollector } from './lab-collector.js';
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
  const close = (): Promise<void> => closeLabSession(lab, collector, log);
  try {
    const c = await startLabCollector(lab, opts.dbPath, log);
    collector = c;
    await connectLabAgents(lab, c, opts);
    return { lab, collector: c, close };
  } catch (err) {
    await close();
    throw err;
  }
}
