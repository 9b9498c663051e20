/**
 * `cni-bench lab study`: the reference study's structure in one command. One
 * fresh lab per dataplane (kube-proxy iptables, Cilium native routing, Cilium
 * VXLAN by default), in each the measurement matrix and then the Service scale
 * sweep, and at the end one comparison: every measurement side by side with
 * its interval and a verdict, the sweep curves with where they cross and how
 * long each dataplane took to program every step.
 */
import { parseScenario } from '../collector/index.js';
import { asCniBenchError } from '../core/errors.js';
import { type FlagValues, listFlag, numberFlag, oneOfFlag, stringFlag, switchFlag } from '../core/flags.js';
import { exitCodeFor, trapInterrupts } from '../core/interrupts.js';
import type { Logger } from '../core/log.js';
import {
  dataplaneProxy,
  type IptablesBackend,
  LAB_DATAPLANES,
  type LabDataplane,
  lbMapMaxFor,
  runScenariosInLab,
} from '../lab/index.js';
import { renderStudyHtml } from '../report/html-study.js';
import { buildStudy, type StudyRunInput, type StudySettings } from '../report/study.js';
import { renderStudyMarkdown } from '../report/study-render.js';
import { defineCommand } from './command.js';
import { agentWaitFlag, dbFlag, durationFlag, iptablesBackendFlag, shareCpusFlag, warmupFlag } from './common-flags.js';
import { LAB_DEFAULTS } from './lab-command.js';
import { labRunOptions } from './lab-run-options.js';
import { followProgress, type LogStyle, logFlag } from './progress.js';
import { readScenarioFile } from './scenario-file.js';
import { modeLabel, sweepScenario } from './sweep-command.js';

/** The study's dataplanes: the reference study's clusters A, B and C. */
export const STUDY_DEFAULT_DATAPLANES: readonly LabDataplane[] = ['iptables', 'cilium', 'cilium-vxlan'];

/**
 * Defaults chosen to fit about 25 minutes on 2 cores for the three default
 * dataplanes: the lab's default matrix, and a sweep at 0, 5,000 and 10,000
 * Services (the study's own first steps, so its figures compare directly;
 * Cilium's default LB map holds them, so no lab needs a resized map) in 3
 * rounds of 2 s per step. On Cilium a step's cost is mostly its API writes.
 */
export const STUDY_DEFAULTS = {
  steps: [0, 5000, 10_000] as readonly number[],
  endpointsPerService: 4,
  sweepDurationSeconds: 2,
  sweepRounds: 3,
} as const;

export interface StudyCommandOptions extends StudySettings {
  /** Fields of a scenario file that override the matrix run's defaults (--scenario). */
  matrixScenario?: Record<string, unknown>;
  dataplanes: readonly LabDataplane[];
  iptablesBackend: IptablesBackend;
  json: boolean;
  dbPath: string;
  agentWaitMs: number;
  shareCpus?: boolean;
  /** html: one page with the charts (md and json as --json says); the progress style on stderr. */
  format?: 'md' | 'json' | 'html';
  log?: LogStyle;
}

function matrixScenario(label: string, o: StudyCommandOptions): Record<string, unknown> {
  return {
    durationSeconds: o.durationSeconds,
    ...(o.durationSeconds === LAB_DEFAULTS.durationSeconds
      ? { throughputDurationSeconds: LAB_DEFAULTS.throughputDurationSeconds }
      : {}),
    warmupSeconds: o.warmupSeconds,
    rounds: o.rounds,
    roundSleepSeconds: LAB_DEFAULTS.roundSleepSeconds,
    // A scenario file's fields (its measurements, say) override the study's matrix defaults.
    ...o.matrixScenario,
    name: `lab study ${label}: matrix`,
  };
}

/** The matrix and the sweep one dataplane's lab runs, in order. */
function scenariosOf(label: string, o: StudyCommandOptions): Record<string, unknown>[] {
  return [
    matrixScenario(label, o),
    sweepScenario(`lab study ${label}: Service sweep`, {
      durationSeconds: o.sweepDurationSeconds,
      warmupSeconds: o.warmupSeconds,
      rounds: o.sweepRounds,
      steps: o.steps,
      endpointsPerService: o.endpointsPerService,
    }),
  ];
}

async function studyOne(
  dataplane: LabDataplane,
  o: StudyCommandOptions,
  log: Logger,
  signal: AbortSignal,
): Promise<StudyRunInput> {
  const label = modeLabel(dataplane, o.iptablesBackend);
  const began = Date.now();
  try {
    const lbMapMax = lbMapMaxFor(Math.max(...o.steps), o.endpointsPerService);
    log.info('study: fresh lab', { dataplane: label });
    const [matrix, sweep] = await runScenariosInLab(
      {
        ...o,
        proxy: dataplaneProxy(dataplane, { iptablesBackend: o.iptablesBackend, lbMapMax }),
        watch: (read) => followProgress(read, { style: o.log ?? 'auto' }),
      },
      scenariosOf(label, o),
      log,
      signal,
    );
    return { label, seconds: (Date.now() - began) / 1000, ...(matrix ? { matrix } : {}), ...(sweep ? { sweep } : {}) };
  } catch (err) {
    const e = asCniBenchError(err);
    log.error('study: lab failed', { dataplane: label, error: e.message });
    return { label, seconds: (Date.now() - began) / 1000, error: e.message };
  }
}

/** Returns the exit code: 0 every run of every dataplane succeeded, 1 otherwise, 130/143 interrupted. */
export async function studyCommand(o: StudyCommandOptions, log: Logger): Promise<number> {
  // Refused before any lab is built: a bad step costs no namespaces.
  for (const sc of scenariosOf('check', o)) parseScenario(sc, process.env);
  const interrupts = trapInterrupts(log);
  const began = Date.now();
  try {
    const runs: StudyRunInput[] = [];
    for (const dp of o.dataplanes) {
      if (interrupts.signal.aborted) break;
      runs.push(await studyOne(dp, o, log, interrupts.signal));
    }
    const wall = (Date.now() - began) / 1000;
    const study = buildStudy(runs, o, wall);
    if (o.format === 'html') process.stdout.write(renderStudyHtml(study, runs));
    else if (o.json || o.format === 'json')
      process.stdout.write(
        `${JSON.stringify({ study, runs: runs.map((r) => ({ dataplane: r.label, matrix: r.matrix, sweep: r.sweep, error: r.error })) }, null, 2)}\n`,
      );
    else process.stdout.write(`${renderStudyMarkdown(study)}\nWall time of this command: ${wall.toFixed(1)} s.\n`);
    if (interrupts.received()) return exitCodeFor(interrupts.received());
    const ok =
      runs.length === o.dataplanes.length &&
      runs.every((r) => r.matrix?.run.state === 'succeeded' && r.sweep?.run.state === 'succeeded');
    return ok ? 0 : 1;
  } finally {
    interrupts.dispose();
  }
}

const dataplane = oneOfFlag<LabDataplane>(LAB_DATAPLANES, { help: '', default: 'iptables' });
const step = numberFlag({ help: '', default: 0, min: 0, integer: true });

const flags = {
  dataplanes: listFlag((t, n) => dataplane.parse(t, n), {
    help: `dataplanes to study, each in a fresh lab, the first the baseline (any of ${LAB_DATAPLANES.join(', ')}; Cilium needs 'bash scripts/setup.sh --cilium')`,
    value: 'DP,DP,...',
    default: STUDY_DEFAULT_DATAPLANES,
  }),
  duration: durationFlag(LAB_DEFAULTS.durationSeconds),
  warmup: warmupFlag(LAB_DEFAULTS.warmupSeconds),
  scenario: stringFlag({
    help: "scenario file (JSON) for the matrix run; its fields (e.g. 'measurements') override the study's matrix defaults",
    value: 'FILE',
    default: undefined,
  }),
  rounds: numberFlag({
    help: 'measured rounds per matrix measurement',
    default: LAB_DEFAULTS.rounds,
    min: 1,
    integer: true,
  }),
  steps: listFlag((t, n) => step.parse(t, n), {
    help: 'dummy Services present at each sweep step',
    value: 'N,N,...',
    default: STUDY_DEFAULTS.steps,
  }),
  endpoints: numberFlag({
    help: 'endpoints per dummy Service',
    default: STUDY_DEFAULTS.endpointsPerService,
    min: 1,
    integer: true,
  }),
  'sweep-duration': numberFlag({
    help: 'seconds per measured round at each sweep step',
    value: 'S',
    default: STUDY_DEFAULTS.sweepDurationSeconds,
    min: 0.1,
  }),
  'sweep-rounds': numberFlag({
    help: 'measured rounds per measurement at each sweep step',
    default: STUDY_DEFAULTS.sweepRounds,
    min: 1,
    integer: true,
  }),
  nodes: numberFlag({ help: 'lab nodes (network namespaces)', default: LAB_DEFAULTS.nodes, min: 2, integer: true }),
  'iptables-backend': iptablesBackendFlag,
  'share-cpus': shareCpusFlag,
  json: switchFlag({ help: 'print the study and every run as JSON instead of Markdown' }),
  format: oneOfFlag<'md' | 'json' | 'html'>(['md', 'json', 'html'], {
    help: 'Markdown, JSON (as --json) or one self-contained HTML page with the charts',
    default: 'md',
  }),
  log: logFlag,
  db: dbFlag,
  'agent-wait': agentWaitFlag,
};

async function options(v: FlagValues<typeof flags>): Promise<StudyCommandOptions> {
  return {
    ...(v.scenario ? { matrixScenario: await readScenarioFile(v.scenario) } : {}),
    ...labRunOptions(v),
    dataplanes: v.dataplanes,
    rounds: v.rounds,
    steps: v.steps,
    endpointsPerService: v.endpoints,
    sweepDurationSeconds: v['sweep-duration'],
    sweepRounds: v['sweep-rounds'],
    iptablesBackend: v['iptables-backend'],
  };
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench lab study',
    summary:
      "The reference study in one command: one fresh lab per dataplane (kube-proxy iptables, Cilium native routing, Cilium VXLAN by default), in each the measurement matrix and the Service scale sweep, then one report with every measurement side by side (intervals and verdicts against the first dataplane), the sweep curves with where they cross, and each step's programming latency. Prints its wall time; the defaults are chosen to fit about 25 minutes on 2 quiet cores (docs/study.md). Needs root.",
    flags,
    examples: [
      'cni-bench lab study',
      'cni-bench lab study --dataplanes iptables,nftables,cilium --json > study.json',
      'cni-bench lab study --rounds 5 --sweep-rounds 5 --steps 0,5000,10000,20000,30000',
    ],
    notes: [
      'A longer run (more rounds, longer rounds, steps up to 30,000 Services) narrows the intervals and reaches the reference study’s crossover region; see docs/study.md.',
      'Exit codes: 0 every run succeeded, 1 a run failed, 2 bad flags, 130/143 interrupted.',
    ],
  },
  run: async (values, _positionals, ctx) => studyCommand(await options(values), ctx.log),
});
