/**
 * `cni-bench lab sweep`: the Service scale sweep of the reference study, once
 * per kube-proxy mode, each in a fresh lab (so one mode's rules and conntrack
 * state never touch the other's), then the modes side by side with where one
 * overtakes the other.
 */
import { renderMarkdown, renderSweepComparison } from '../report/markdown.js';
import type { ReportModel } from '../report/report.js';
import { compareSweeps } from '../report/sweep.js';
import type { Logger } from '../core/log.js';
import { type IptablesBackend, type ProxyMode, runInLab } from '../lab/index.js';
import { exitCodeFor, trapInterrupts } from '../core/interrupts.js';

export interface SweepCommandOptions {
  nodes: number;
  modes: ProxyMode[];
  iptablesBackend: IptablesBackend;
  steps: number[];
  endpointsPerService: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** Measured rounds per measurement at each step. */
  rounds: number;
  json: boolean;
  dbPath: string;
  agentWaitMs: number;
  shareCpus?: boolean;
}

export function modeLabel(mode: ProxyMode, backend: IptablesBackend): string {
  return mode === 'iptables' ? `iptables (${backend})` : mode;
}

export async function sweepCommand(opts: SweepCommandOptions, log: Logger): Promise<number> {
  const interrupts = trapInterrupts(log);
  const done: { label: string; model: ReportModel }[] = [];
  try {
    for (const mode of opts.modes) {
      if (interrupts.signal.aborted) break;
      const scenario = {
        name: `lab sweep ${modeLabel(mode, opts.iptablesBackend)}`,
        durationSeconds: opts.durationSeconds,
        warmupSeconds: opts.warmupSeconds,
        rounds: opts.rounds,
        roundSleepSeconds: 0.5,
        serviceScale: { steps: opts.steps, endpointsPerService: opts.endpointsPerService },
        // Boundary samples only: a periodic sample of a node with 30,000 Services costs seconds of CPU.
        sampleIntervalMs: 0,
      };
      const model = await runInLab({ ...opts, proxy: { mode, iptablesBackend: opts.iptablesBackend } }, scenario, log, interrupts.signal);
      if (model) done.push({ label: modeLabel(mode, opts.iptablesBackend), model });
    }
    const withSweep = done.filter((d) => d.model.sweep).map((d) => ({ label: d.label, sweep: d.model.sweep as NonNullable<ReportModel['sweep']> }));
    const comparison = withSweep.length ? compareSweeps(withSweep) : undefined;
    if (opts.json) process.stdout.write(`${JSON.stringify({ runs: done.map((d) => ({ mode: d.label, report: d.model })), comparison }, null, 2)}\n`);
    else {
      for (const d of done) process.stdout.write(`${renderMarkdown(d.model)}\n`);
      if (comparison && withSweep.length > 1) process.stdout.write(renderSweepComparison(comparison));
    }
    if (interrupts.received()) return exitCodeFor(interrupts.received());
    return done.length === opts.modes.length && done.every((d) => d.model.run.state === 'succeeded') ? 0 : 1;
  } catch (err) {
    if (interrupts.received()) return exitCodeFor(interrupts.received());
    throw err;
  } finally {
    interrupts.dispose();
  }
}
