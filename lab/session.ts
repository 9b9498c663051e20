/**
 * What every lab command shares: a session that creates a lab, starts a
 * collector in this process (root namespace) and agents in the lab's pods,
 * runs a scenario to its end, and tears everything down whatever happens.
 */
import type { Collector } from '../collector/index.js';
import type { Logger } from '../core/log.js';
import type { ProgressRun } from '../report/progress.js';
import type { ReportModel } from '../report/report.js';
import { Lab } from './lab.js';
import { closeLabSession, connectLabAgents, startLabCollector } from './lab-collector.js';
import type { LabProxyOptions } from './proxy.js';

export interface LabSessionOptions {
  nodes: number;
  proxy: LabProxyOptions;
  dbPath: string;
  agentWaitMs: number;
  /** Shape node uplinks to this rate (see Lab); also declared to the scenario as its link speed. */
  linkMbit?: number;
  /** Every node may use every CPU (default: each node its own share when there are enough; lab/cpu-sets.ts). */
  shareCpus?: boolean;
  /** iptables/nftables labs: start a real NetworkPolicy enforcer (lab/policy/enforcer.ts). */
  policyEnforcer?: boolean;
  /** Runs once the lab exists, before agents start (tests use it to set up conditions in the namespaces). */
  beforeAgents?: (lab: Lab) => Promise<void>;
  /** Called once the run exists with a reader of its record (for progress); stopped when the run ends. */
  watch?: (read: () => ProgressRun) => { stop(): Promise<void> };
}

/**
 * Runs one scenario in a fresh lab and returns its report model, or undefined
 * when interrupted before the run started. An interrupt during the run cancels
 * it (with cleanup on the agents) and returns what was measured so far.
 */
export async function runInLab(
  opts: LabSessionOptions,
  scenario: unknown,
  log: Logger,
  signal: AbortSignal,
): Promise<ReportModel | undefined> {
  return (await runScenariosInLab(opts, [scenario], log, signal))[0];
}

/**
 * Runs several scenarios one after the other in one fresh lab (one collector,
 * the same agents), e.g. a study's measurement matrix and then its Service
 * sweep, and returns their report models in order. An interrupt cancels the
 * run in progress and starts no further one; the models so far are returned.
 */
export async function runScenariosInLab(
  opts: LabSessionOptions,
  scenarios: readonly unknown[],
  log: Logger,
  signal: AbortSignal,
): Promise<ReportModel[]> {
  let lab: Lab | undefined;
  let collector: Collector | undefined;
  const models: ReportModel[] = [];
  try {
    lab = await Lab.create({
      nodes: opts.nodes,
      log,
      proxy: opts.proxy,
      shareCpus: opts.shareCpus ?? false,
      policyEnforcer: opts.policyEnforcer ?? false,
      signal,
      ...(opts.linkMbit !== undefined ? { linkMbit: opts.linkMbit } : {}),
    });
    if (signal.aborted) return models;
    collector = await startLabCollector(lab, opts.dbPath, log);
    await connectLabAgents(lab, collector, opts, signal);
    for (const scenario of scenarios) {
      if (signal.aborted) break;
      models.push(await runOne(collector, lab, opts, scenario, log, signal));
    }
    return models;
  } finally {
    await closeLabSession(lab, collector, log);
  }
}

async function runOne(
  c: Collector,
  lab: Lab,
  opts: LabSessionOptions,
  scenario: unknown,
  log: Logger,
  signal: AbortSignal,
): Promise<ReportModel> {
  const declared =
    opts.linkMbit !== undefined && typeof scenario === 'object' && scenario !== null && !('linkGbps' in scenario)
      ? { ...scenario, linkGbps: opts.linkMbit / 1000 }
      : scenario;
  const run = c.api.create(declared, process.env);
  log.info('run started', { runId: run.id, rest: c.httpUrl, proxy: lab.services.description });
  const watcher = opts.watch?.(() => c.api.get(run.id));
  try {
    await Promise.race([
      c.orchestrator.wait(run.id),
      new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
    ]);
    if (signal.aborted) await c.orchestrator.cancel(run.id);
  } finally {
    await watcher?.stop();
  }
  return c.api.reportModel(run.id);
}
