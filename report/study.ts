/**
 * The reference study in one model: per dataplane (each measured in its own
 * fresh lab) the measurement matrix and the Service scale sweep, put side by
 * side. The matrix goes through compare.ts (every cell with its interval and a
 * verdict against the first dataplane), the sweeps through sweep.ts (curves,
 * programming latency, where they cross), and each sweep's last step is tested
 * against its own step 0 (the study's "-71% at 30k Services"). Pure: report
 * models in, study out; the renderer is study-render.ts.
 */
import { type ComparisonTable, clusterLabel, compareReports, DEFAULT_NOISE_FLOOR } from './compare.js';
import type { ReportModel } from './report.js';
import { compareRounds, type Verdict } from './significance.js';
import { compareSweeps, type SweepComparison, type SweepTable } from './sweep.js';

export const STUDY_SCHEMA = 'cni-bench.study/v1';

/** What one dataplane's lab produced. */
export interface StudyRunInput {
  /** Column heading: the dataplane as asked for ("iptables (legacy)", "cilium"). */
  label: string;
  matrix?: ReportModel;
  sweep?: ReportModel;
  /** Wall time of this dataplane's lab: set-up, both runs, teardown. */
  seconds: number;
  /** Why the lab produced nothing (it failed to start, or was interrupted). */
  error?: string;
}

export interface StudySettings {
  nodes: number;
  durationSeconds: number;
  warmupSeconds: number;
  rounds: number;
  steps: readonly number[];
  endpointsPerService: number;
  sweepDurationSeconds: number;
  sweepRounds: number;
}

/** One sweep series of one dataplane: its last step against its own step 0. */
export interface ScaleVerdict {
  dataplane: string;
  series: string;
  unit: string;
  fromServices: number;
  toServices: number;
  baseline: number | null;
  last: number | null;
  baselineCi95: [number, number] | null;
  lastCi95: [number, number] | null;
  relDiff: number | null;
  pValue: number | null;
  verdict: Verdict | 'not compared';
  reason: string;
}

export interface StudyModel {
  schema: typeof STUDY_SCHEMA;
  settings: StudySettings;
  wallSeconds: number;
  dataplanes: {
    label: string;
    /** What the collector detected in this lab (compare.ts clusterLabel), or '' when no run finished. */
    cluster: string;
    matrixState: string;
    sweepState: string;
    seconds: number;
    error: string;
  }[];
  /** Null with fewer than two dataplanes that ran their matrix. */
  matrix: ComparisonTable | null;
  /** Null when no dataplane ran its sweep. */
  sweep: SweepComparison | null;
  scaleVerdicts: ScaleVerdict[];
  /** The findings a reader wants first, as sentences. */
  headline: string[];
}

/** Each sweep series' last step against its own first, for one dataplane. */
export function scaleVerdicts(label: string, sweep: SweepTable, noiseFloor = DEFAULT_NOISE_FLOOR): ScaleVerdict[] {
  const last = sweep.steps.length - 1;
  if (last < 1) return [];
  return sweep.series.map((s): ScaleVerdict => {
    const a = s.rounds[0] ?? null;
    const b = s.rounds[last] ?? null;
    const base = {
      dataplane: label,
      series: s.label,
      unit: s.unit,
      fromServices: sweep.steps[0]?.services ?? 0,
      toServices: sweep.steps[last]?.services ?? 0,
      baseline: s.values[0] ?? null,
      last: s.values[last] ?? null,
    };
    if (!a?.length || !b?.length)
      return {
        ...base,
        baselineCi95: null,
        lastCi95: null,
        relDiff: null,
        pValue: null,
        verdict: 'not compared',
        reason: 'a step has no measured rounds',
      };
    const c = compareRounds(a, b, { higherIsBetter: true, noiseFloor });
    return {
      ...base,
      baselineCi95: c.baseline.ci95,
      lastCi95: c.candidate.ci95,
      relDiff: Number.isFinite(c.relDiff) ? c.relDiff : null,
      pValue: c.pValue,
      verdict: c.verdict,
      reason: c.reason,
    };
  });
}

function pctText(rel: number | null): string {
  if (rel === null) return 'n/a';
  const p = Math.round(rel * 100);
  return `${p > 0 ? '+' : ''}${p}%`;
}

function headlineOf(model: Omit<StudyModel, 'headline'>): string[] {
  const lines: string[] = [];
  const shortConn = (v: ScaleVerdict) => /short-connection/.test(v.series);
  for (const v of model.scaleVerdicts.filter(shortConn)) {
    const what =
      v.verdict === 'worse'
        ? `falls ${pctText(v.relDiff)} (significant)`
        : v.verdict === 'better'
          ? `rises ${pctText(v.relDiff)} (significant)`
          : v.verdict === 'within noise'
            ? `stays within noise (${pctText(v.relDiff)})`
            : `changes ${pctText(v.relDiff)} (${v.verdict})`;
    lines.push(
      `${v.dataplane}: ${v.series} ${what} from ${v.fromServices.toLocaleString('en-US')} to ${v.toServices.toLocaleString('en-US')} Services.`,
    );
  }
  for (const s of model.sweep?.series ?? []) {
    if (!/short-connection/.test(s.label)) continue;
    for (const x of s.crossovers) lines.push(`${s.label}: ${x.text}.`);
  }
  if (model.matrix) {
    for (const [i, run] of model.matrix.runs.entries()) {
      if (i === 0) continue;
      const count = (v: string) => model.matrix?.rows.filter((r) => r.cells[i]?.vsBaseline?.verdict === v).length ?? 0;
      lines.push(
        `Measurement matrix, ${run.label} against ${model.matrix.baseline}: ${count('better')} better, ${count('worse')} worse, ${count('within noise')} within noise, ${count('noise unknown') + count('not compared')} undecided.`,
      );
    }
  }
  return lines;
}

/** Builds the study from each dataplane's runs (the first dataplane is the baseline of every comparison). */
export function buildStudy(
  runs: readonly StudyRunInput[],
  settings: StudySettings,
  wallSeconds: number,
  noiseFloor = DEFAULT_NOISE_FLOOR,
): StudyModel {
  const withMatrix = runs.filter((r) => r.matrix);
  const matrix =
    withMatrix.length >= 2
      ? compareReports(
          withMatrix.map((r) => r.matrix as ReportModel),
          { noiseFloor, labels: withMatrix.map((r) => r.label) },
        )
      : null;
  const sweeps = runs
    .filter((r) => r.sweep?.sweep)
    .map((r) => ({ label: r.label, sweep: r.sweep?.sweep as SweepTable }));
  const sweep = sweeps.length ? compareSweeps(sweeps) : null;
  const partial: Omit<StudyModel, 'headline'> = {
    schema: STUDY_SCHEMA,
    settings,
    wallSeconds,
    dataplanes: runs.map((r) => {
      const described = r.matrix ?? r.sweep;
      return {
        label: r.label,
        cluster: described ? clusterLabel(described.cluster.description) : '',
        matrixState: r.matrix?.run.state ?? 'not run',
        sweepState: r.sweep?.run.state ?? 'not run',
        seconds: r.seconds,
        error: r.error ?? '',
      };
    }),
    matrix,
    sweep,
    scaleVerdicts: sweeps.flatMap((s) => scaleVerdicts(s.label, s.sweep, noiseFloor)),
  };
  return { ...partial, headline: headlineOf(partial) };
}
