/**
 * `cni-bench lab sweep`: the Service scale sweep of the reference study, once
 * per kube-proxy mode, each in a fresh lab (so one mode's rules and conntrack
 * state never touch the other's), then the modes side by side with where one
 * overtakes the other.
 */
import { DEFAULT_SCALE_STEPS } from '../collector/index.js';
import { type FlagValues, listFlag, numberFlag, oneOfFlag, switchFlag } from '../core/flags.js';
import { exitCodeFor, trapInterrupts } from '../core/interrupts.js';
import type { Logger } from '../core/log.js';
import { type IptablesBackend, PROXY_MODES, type ProxyMode, runInLab } from '../lab/index.js';
import { renderSweepCsv } from '../report/csv.js';
import { renderSweepHtml } from '../report/html-sweep.js';
import { renderMarkdown, renderSweepComparison } from '../report/markdown.js';
import type { ReportModel } from '../report/report.js';
import type { ReportFormat } from '../report/report-formats.js';
import { compareSweeps } from '../report/sweep.js';
import { defineCommand } from './command.js';
import {
  agentWaitFlag,
  dbFlag,
  durationFlag,
  formatFlag,
  iptablesBackendFlag,
  nodesFlag,
  shareCpusFlag,
  warmupFlag,
} from './common-flags.js';
import { LAB_DEFAULTS } from './lab-command.js';
import { followProgress, type LogStyle, logFlag } from './progress.js';

export interface SweepCommandOptions {
  nodes: number;
  modes: readonly ProxyMode[];
  iptablesBackend: IptablesBackend;
  steps: readonly number[];
  endpointsPerService: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** Measured rounds per measurement at each step. */
  rounds: number;
  json: boolean;
  dbPath: string;
  agentWaitMs: number;
  shareCpus?: boolean;
  /** html or csv: the whole sweep in one page or one table (md and json as --json says). */
  format?: ReportFormat;
  log?: LogStyle;
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
      const model = await runInLab(
        {
          ...opts,
          proxy: { mode, iptablesBackend: opts.iptablesBackend },
          watch: (read) => followProgress(read, { style: opts.log ?? 'auto' }),
        },
        scenario,
        log,
        interrupts.signal,
      );
      if (model) done.push({ label: modeLabel(mode, opts.iptablesBackend), model });
    }
    const withSweep = done
      .filter((d) => d.model.sweep)
      .map((d) => ({ label: d.label, sweep: d.model.sweep as NonNullable<ReportModel['sweep']> }));
    const comparison = withSweep.length ? compareSweeps(withSweep) : undefined;
    if (opts.format === 'html') process.stdout.write(renderSweepHtml(done, comparison));
    else if (opts.format === 'csv') process.stdout.write(renderSweepCsv(done));
    else if (opts.json || opts.format === 'json')
      process.stdout.write(
        `${JSON.stringify({ runs: done.map((d) => ({ mode: d.label, report: d.model })), comparison }, null, 2)}\n`,
      );
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

const mode = oneOfFlag<ProxyMode>(PROXY_MODES, { help: '', default: 'iptables' });
const step = numberFlag({ help: '', default: 0, min: 0, integer: true });

const flags = {
  modes: listFlag((t, n) => mode.parse(t, n), {
    help: 'kube-proxy modes to sweep, each in a fresh lab',
    value: PROXY_MODES.join(','),
    default: PROXY_MODES,
  }),
  steps: listFlag((t, n) => step.parse(t, n), {
    help: 'dummy Services present at each step',
    value: 'N,N,...',
    default: DEFAULT_SCALE_STEPS,
  }),
  endpoints: numberFlag({ help: 'endpoints per dummy Service', default: 4, min: 1, integer: true }),
  duration: durationFlag(LAB_DEFAULTS.durationSeconds),
  warmup: warmupFlag(1),
  rounds: numberFlag({
    help: 'measured rounds per measurement at each step',
    default: LAB_DEFAULTS.rounds,
    min: 1,
    integer: true,
  }),
  nodes: nodesFlag(2),
  'iptables-backend': iptablesBackendFlag,
  'share-cpus': shareCpusFlag,
  json: switchFlag({ help: 'print every run and the comparison as JSON instead of Markdown' }),
  format: formatFlag,
  log: logFlag,
  db: dbFlag,
  'agent-wait': agentWaitFlag,
};

function options(v: FlagValues<typeof flags>): SweepCommandOptions {
  return {
    nodes: v.nodes,
    modes: v.modes,
    iptablesBackend: v['iptables-backend'],
    steps: v.steps,
    endpointsPerService: v.endpoints,
    durationSeconds: v.duration,
    warmupSeconds: v.warmup,
    rounds: v.rounds,
    json: v.json,
    format: v.format,
    log: v.log,
    dbPath: v.db,
    agentWaitMs: v['agent-wait'] * 1000,
    shareCpus: v['share-cpus'],
  };
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench lab sweep',
    summary:
      "The reference study's Service scale sweep: at each step the lab holds that many dummy Services, waits until every node's rules show them, and measures again; once per kube-proxy mode, then the modes side by side with where one overtakes the other. Needs root.",
    flags,
    examples: [
      'cni-bench lab sweep',
      'cni-bench lab sweep --modes nftables --steps 0,1000,5000 --rounds 2 --json > sweep.json',
    ],
    notes: ['Exit codes: 0 every mode succeeded, 1 a run failed, 2 bad flags, 130/143 interrupted.'],
  },
  run: (values, _positionals, ctx) => sweepCommand(options(values), ctx.log),
});
