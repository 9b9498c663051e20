/**
 * `cni-bench lab sweep`: the Service scale sweep of the reference study, once
 * per dataplane (kube-proxy's iptables and nftables modes, real Cilium), each
 * in a fresh lab (so one dataplane's rules, maps and conntrack state never
 * touch the other's), then the dataplanes side by side with where one
 * overtakes the other and how long each took to program every step.
 */
import { DEFAULT_SCALE_STEPS, parseScenario } from '../collector/index.js';
import { type FlagValues, listFlag, numberFlag, oneOfFlag, switchFlag } from '../core/flags.js';
import { exitCodeFor, trapInterrupts } from '../core/interrupts.js';
import type { Logger } from '../core/log.js';
import {
  dataplaneProxy,
  type IptablesBackend,
  LAB_DATAPLANES,
  type LabDataplane,
  lbMapMaxFor,
  runInLab,
} from '../lab/index.js';
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
import { labRunOptions } from './lab-run-options.js';
import { followProgress, type LogStyle, logFlag } from './progress.js';

export interface SweepCommandOptions {
  nodes: number;
  modes: readonly LabDataplane[];
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

/** The sweep's default dataplanes: the study's kube-proxy iptables against Cilium, and nftables. */
export const SWEEP_DEFAULT_MODES: readonly LabDataplane[] = ['iptables', 'nftables', 'cilium'];

export function modeLabel(mode: LabDataplane, backend: IptablesBackend): string {
  return mode === 'iptables' ? `iptables (${backend})` : mode;
}

/** The scenario of one dataplane's sweep (the study runs the same). */
export function sweepScenario(
  name: string,
  o: Pick<SweepCommandOptions, 'durationSeconds' | 'warmupSeconds' | 'rounds' | 'steps' | 'endpointsPerService'>,
): Record<string, unknown> {
  return {
    name,
    durationSeconds: o.durationSeconds,
    warmupSeconds: o.warmupSeconds,
    rounds: o.rounds,
    roundSleepSeconds: 0.5,
    serviceScale: { steps: o.steps, endpointsPerService: o.endpointsPerService },
    // Boundary samples only: a periodic sample of a node with 30,000 Services costs seconds of CPU.
    sampleIntervalMs: 0,
  };
}

export async function sweepCommand(opts: SweepCommandOptions, log: Logger): Promise<number> {
  // Refused before any lab is built: a bad step costs no namespaces.
  parseScenario(sweepScenario('check', opts), process.env);
  const interrupts = trapInterrupts(log);
  const done: { label: string; model: ReportModel }[] = [];
  try {
    for (const mode of opts.modes) {
      if (interrupts.signal.aborted) break;
      const scenario = sweepScenario(`lab sweep ${modeLabel(mode, opts.iptablesBackend)}`, opts);
      const lbMapMax = lbMapMaxFor(Math.max(...opts.steps), opts.endpointsPerService);
      const model = await runInLab(
        {
          ...opts,
          proxy: dataplaneProxy(mode, { iptablesBackend: opts.iptablesBackend, lbMapMax }),
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

const mode = oneOfFlag<LabDataplane>(LAB_DATAPLANES, { help: '', default: 'iptables' });
const step = numberFlag({ help: '', default: 0, min: 0, integer: true });

const flags = {
  modes: listFlag((t, n) => mode.parse(t, n), {
    help: `dataplanes to sweep, each in a fresh lab (any of ${LAB_DATAPLANES.join(', ')}; Cilium needs 'bash scripts/setup.sh --cilium')`,
    value: 'DP,DP,...',
    default: SWEEP_DEFAULT_MODES,
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
    ...labRunOptions(v),
    modes: v.modes,
    iptablesBackend: v['iptables-backend'],
    steps: v.steps,
    endpointsPerService: v.endpoints,
    rounds: v.rounds,
  };
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench lab sweep',
    summary:
      "The reference study's Service scale sweep: at each step the lab holds that many dummy Services, waits until every node's dataplane shows them (KUBE-SERVICES, nftables service-ips, Cilium's LB maps; polled, never a sleep), and measures again; once per dataplane in a fresh lab, then the dataplanes side by side with where one overtakes the other and each step's programming latency. A Cilium lab starts with bpf-lb-map-max sized for the largest step. Needs root.",
    flags,
    examples: [
      'cni-bench lab sweep',
      'cni-bench lab sweep --modes nftables --steps 0,1000,5000 --rounds 2 --json > sweep.json',
      'cni-bench lab sweep --modes iptables,cilium-vxlan --steps 0,5000,10000',
    ],
    notes: ['Exit codes: 0 every mode succeeded, 1 a run failed, 2 bad flags, 130/143 interrupted.'],
  },
  run: (values, _positionals, ctx) => sweepCommand(options(values), ctx.log),
});
