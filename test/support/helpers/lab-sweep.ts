/**
 * What the `cni-bench lab sweep` suites share: the command's flags, and the
 * study's finding read from a sweep report as ratios within one run
 * (short-connection RPS through the Service at the last step against the
 * same dataplane's step 0), so a slow or busy machine moves both sides alike.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { type Comparison, compareRounds } from '../../../report/significance.js';
import { CLI_MAIN, startNode } from './procs.js';

/** `lab sweep` over `modes` at `steps` of 4-endpoint Services, `rounds` of 1 s after 0.5 s warm-up, JSON out. */
function labSweepArgs(modes: string, steps: readonly number[], rounds: number, db: string): string[] {
  return [
    'lab',
    'sweep',
    '--modes',
    modes,
    '--steps',
    steps.join(','),
    '--endpoints',
    '4',
    '--duration',
    '1',
    '--warmup',
    '0.5',
    '--rounds',
    String(rounds),
    '--json',
    '--db',
    db,
  ];
}

/** The ids of the labs a lab command logged (created or destroyed) at log level info. */
function labIdsIn(log: string): string[] {
  return [
    ...new Set(
      [...log.matchAll(/"msg":"lab (?:created|destroyed)"[^\n]*"id":"([0-9a-f]+)"/g)].map((m) => m[1] as string),
    ),
  ];
}

export interface LabSweepRun {
  code: number | null;
  /** stdout and stderr as they came. */
  output: string;
  /** The sweep's JSON: every run and the comparison. */
  stdout: string;
  /** The labs it created, one per mode, read from its log (level info). */
  labIds: string[];
}

/** Runs `cni-bench lab sweep` (see labSweepArgs) with `db` as its store, to its end. */
export async function runLabSweep(
  modes: string,
  steps: readonly number[],
  rounds: number,
  db: string,
): Promise<LabSweepRun> {
  const p = startNode(CLI_MAIN, labSweepArgs(modes, steps, rounds, db), { CNI_BENCH_LOG_LEVEL: 'info' });
  const code = await p.exited;
  return { code, output: p.output(), stdout: p.stdout(), labIds: labIdsIn(p.output()) };
}

/** The runs of `lab sweep --json` are `modes` in that order, each succeeded with every one of `steps` succeeded. */
export function assertSweepSucceeded(
  out: { runs: { mode: string; report: any }[] },
  modes: readonly string[],
  steps: readonly number[],
): void {
  assert.deepEqual(
    out.runs.map((r) => r.mode),
    modes,
  );
  for (const { mode, report } of out.runs) {
    assert.equal(report.run.state, 'succeeded', mode);
    assert.deepEqual(
      report.sweep.steps.map((s: { services: number }) => s.services),
      steps,
    );
    for (const st of report.sweep.steps) assert.equal(st.status, 'succeeded');
  }
}

/** A row of a sweep report measured through the Service, as the JSON report has it. */
interface MeasuredRow {
  measurement: string;
  step: number;
  metrics: { perRound: number[] }[];
}

/**
 * Logs every measured row's rounds, and compares short-connection RPS at step `last` with step 0 (higher is
 * better; 15% is the noise floor of 1 s rounds on 2 shared cores).
 */
export function shortConnectionVerdict(
  t: TestContext,
  mode: string,
  measured: MeasuredRow[],
  last: number,
): Comparison {
  const shortAt = (step: number): number[] =>
    measured.find((r) => r.step === step && /short-connection/.test(r.measurement))?.metrics[0]?.perRound ?? [];
  for (const r of measured)
    t.diagnostic(
      `${mode} ${r.measurement} @${r.step}: ${(r.metrics[0]?.perRound ?? []).map((v) => v.toFixed(0)).join(' ')}`,
    );
  return compareRounds(shortAt(0), shortAt(last), { higherIsBetter: true, noiseFloor: 0.15 });
}

/** One diagnostic line per dataplane: its short-connection RPS from step 0 to the last, and the verdict. */
export function logVerdicts(t: TestContext, verdicts: Map<string, Comparison>): void {
  for (const [mode, c] of verdicts)
    t.diagnostic(
      `${mode}: short-connection ${c.baseline.median.toFixed(0)} -> ${c.candidate.median.toFixed(0)} req/s (${(c.relDiff * 100).toFixed(1)}%), ${c.verdict}: ${c.reason}`,
    );
}
