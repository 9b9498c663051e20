/**
 * Puts two or more runs side by side, the way the reference study's summary
 * table does, except that nobody merges it by hand and every difference comes
 * with a verdict: better, worse, within noise or noise unknown, from the raw
 * rounds (report/significance.ts), never from two headline numbers alone. The
 * first run is the baseline. Pure: report models in, table out; the renderers
 * are in compare-render.ts.
 */

import type { ClusterDescription } from '../core/cluster.js';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { comparePathMtus, type PathMtuRow } from './compare-path-mtu.js';
import type { Metric, MetricName } from './metrics-model.js';
import type { ReportModel, ReportRow } from './report.js';
import { compareRounds, type Verdict } from './significance.js';

/** Relative difference below which nothing counts as a change (report/significance.ts uses the same default). */
export const DEFAULT_NOISE_FLOOR = 0.03;

export const COMPARISON_SCHEMA = 'cni-bench.comparison/v1';

export const COMPARISON_FORMATS = ['md', 'json', 'csv', 'html'] as const;
export type ComparisonFormat = (typeof COMPARISON_FORMATS)[number];

export interface ComparisonRun {
  /** Column heading: opts.labels, else the cluster description, else the run name or id; unique within the table. */
  label: string;
  id: string;
  name: string;
  state: string;
  reason: string;
  startedMs: number;
  endedMs: number;
  /** Null when the report carries none (reports written before descriptions existed). */
  cluster: ClusterDescription | null;
}

export interface VersusBaseline {
  /** (candidate median - baseline median) / |baseline median|, from the rounds; null when not compared. */
  relDiff: number | null;
  pValue: number | null;
  /** 'not compared' when either side has no rounds (missing, failed, or no per-round values). */
  verdict: Verdict | 'not compared';
  reason: string;
}

export interface ComparisonCell {
  /** The metric's headline value; null when the run lacks the measurement or it did not succeed. */
  value: number | null;
  /** Rounds behind the value. */
  n: number;
  /** 95% confidence interval of the mean of the rounds; null with fewer than 2 rounds. */
  ci95: [number, number] | null;
  /** Coefficient of variation of the rounds (Infinity, null in JSON, when the mean is 0 but values differ). */
  cv: number | null;
  /** 'missing' when the run has no such measurement, else the phase state. */
  status: string;
  error: string;
  /** Codes of the methodology guards that fired for this measurement in this run. */
  warnings: string[];
  /** Null for the baseline column. */
  vsBaseline: VersusBaseline | null;
}

export interface ComparisonRow {
  /** Identity across runs: measurement id, sweep step, metric. */
  key: string;
  measurementId: string;
  /** Dummy Services present at a sweep step; null outside a sweep. */
  step: number | null;
  metric: MetricName;
  /** The measurement as a person reads it, step included ("HTTP keepalive c64 service @ 5,000 Services"). */
  measurement: string;
  /** measurement and metric: "HTTP keepalive c64 service — rps". */
  label: string;
  unit: string;
  higherIsBetter: boolean;
  /** One per run, in run order. */
  cells: ComparisonCell[];
}

export interface ComparisonWarning {
  run: string;
  measurement: string;
  code: string;
  message: string;
}

export interface ComparisonTable {
  schema: typeof COMPARISON_SCHEMA;
  noiseFloor: number;
  /** Label of runs[0]. */
  baseline: string;
  runs: ComparisonRun[];
  rows: ComparisonRow[];
  /** Every guard that fired, once per run and measurement, for the list under the table. */
  warnings: ComparisonWarning[];
  /** The path MTU of each path per run (compare-path-mtu.ts); absent when no run measured one. */
  pathMtu?: PathMtuRow[];
}

export interface CompareOptions {
  noiseFloor?: number;
  labels?: string[];
}

/** The report row with the sweep step buildReport records from the phase detail (optional: older reports lack it). */
type SteppedRow = ReportRow & { step?: number };

function invalid(field: string, message: string): CniBenchError {
  return new CniBenchError(ErrorCodes.VALIDATION, `${field}: ${message}`, { details: { field } });
}

/**
 * The step of a sweep row: ReportRow.step when present, else the " @ N Services"
 * suffix phases.ts gives a sweep phase's name (reports written before the field).
 */
function stepOf(row: SteppedRow): number | null {
  if (typeof row.step === 'number') return row.step;
  const m = / @ ([\d,]+) Services?$/.exec(row.measurement);
  return m ? Number(m[1]!.replaceAll(',', '')) : null;
}

function measurementName(row: ReportRow): string {
  return row.tool ? row.measurement.replace(` (${row.tool})`, '') : row.measurement;
}

function shortKernel(kernel: string): string {
  return /^\d+\.\d+/.exec(kernel)?.[0] ?? kernel;
}

/** "iptables · lab bridge · 6.18": what differs between the clusters a comparison is usually about. */
export function clusterLabel(d: ClusterDescription | null): string {
  if (!d) return '';
  const cni = [d.cni, d.cniMode].filter((s) => s && s !== 'unknown').join(' ');
  return [d.kubeProxyMode, cni, shortKernel(d.kernel)].filter((s) => s && s !== 'unknown').join(' · ');
}

function descriptionOf(r: ReportModel): ClusterDescription | null {
  const d = (r.cluster as { description?: ClusterDescription } | undefined)?.description;
  return d && typeof d === 'object' ? d : null;
}

function columnLabels(reports: ReportModel[], labels: string[] | undefined): string[] {
  if (labels) {
    if (labels.length !== reports.length)
      throw invalid('labels', `${labels.length} label(s) for ${reports.length} runs; give one per run`);
    const bad = labels.findIndex((l) => !l.trim());
    if (bad >= 0) throw invalid('labels', `label ${bad + 1} is empty`);
    const dup = labels.find((l, i) => labels.indexOf(l) !== i);
    if (dup !== undefined) throw invalid('labels', `'${dup}' is given twice; columns must be told apart`);
    return labels.map((l) => l.trim());
  }
  const auto = reports.map((r) => clusterLabel(descriptionOf(r)) || r.run.name || r.run.id);
  // Two runs on the same cluster are the common case: tell them apart by run id.
  const named = auto.map((l, i) => (auto.indexOf(l) !== auto.lastIndexOf(l) ? `${l} (${reports[i]!.run.id})` : l));
  return named.map((l, i) => (named.indexOf(l) !== i ? `${l} #${i + 1}` : l));
}

interface Entry {
  row: SteppedRow;
  /** Undefined when the run has the measurement but not this metric (a failed phase has none). */
  metric?: Metric;
}

function rowKey(id: string, step: number | null): string {
  return step === null ? id : `${id}@${step}`;
}

interface Indexed {
  metrics: Map<string, Entry & { metric: Metric }>;
  rows: Map<string, SteppedRow>;
}

/** A report's metrics by key and its rows by measurement and step; a repeated key keeps its first occurrence. */
function index(report: ReportModel): Indexed {
  const out: Indexed = { metrics: new Map(), rows: new Map() };
  for (const row of report.rows as SteppedRow[]) {
    const rk = rowKey(row.id, stepOf(row));
    if (!out.rows.has(rk)) out.rows.set(rk, row);
    for (const metric of row.metrics ?? []) {
      const key = `${rk}/${metric.name}`;
      if (!out.metrics.has(key)) out.metrics.set(key, { row, metric });
    }
  }
  return out;
}

type Cell = Omit<ComparisonCell, 'vsBaseline'>;

function cellOf(e: Entry | undefined): Cell {
  if (!e) return { value: null, n: 0, ci95: null, cv: null, status: 'missing', error: '', warnings: [] };
  const warnings = (e.row.warnings ?? []).map((w) => w.code);
  const m = e.metric;
  if (e.row.status !== 'succeeded' || !m || !Number.isFinite(m.value)) {
    return {
      value: null,
      n: 0,
      ci95: null,
      cv: null,
      status: m || e.row.status !== 'succeeded' ? e.row.status : 'missing',
      error: e.row.error,
      warnings,
    };
  }
  return {
    value: m.value,
    n: m.perRound.length,
    ci95: m.summary?.ci95 ?? null,
    cv: m.summary?.cv ?? null,
    status: e.row.status,
    error: e.row.error,
    warnings,
  };
}

function absent(label: string, c: Cell): string {
  if (c.status === 'missing') return `${label} has no such measurement`;
  if (c.status !== 'succeeded') return `${label} ${c.status}`;
  return `${label} has no value`;
}

function versus(
  base: Entry | undefined,
  cand: Entry | undefined,
  cells: [Cell, Cell],
  labels: [string, string],
  higherIsBetter: boolean,
  noiseFloor: number,
): VersusBaseline {
  const notCompared = (reason: string): VersusBaseline => ({
    relDiff: null,
    pValue: null,
    verdict: 'not compared',
    reason,
  });
  if (cells[0].value === null) return notCompared(absent(labels[0], cells[0]));
  if (cells[1].value === null) return notCompared(absent(labels[1], cells[1]));
  const b = base?.metric?.perRound ?? [];
  const c = cand?.metric?.perRound ?? [];
  if (!b.length || !c.length) return notCompared(`${!b.length ? labels[0] : labels[1]} has no per-round values`);
  const r = compareRounds(b, c, { higherIsBetter, noiseFloor });
  return { relDiff: r.relDiff, pValue: r.pValue, verdict: r.verdict, reason: r.reason };
}

function checkNoiseFloor(v: number | undefined): number {
  if (v === undefined) return DEFAULT_NOISE_FLOOR;
  if (!(Number.isFinite(v) && v >= 0 && v < 1)) throw invalid('noiseFloor', `must be a number in [0, 1), got ${v}`);
  return v;
}

/**
 * Builds the side-by-side table of `reports` (the first is the baseline).
 * Rows are matched by measurement id and sweep step, one per metric, in the
 * baseline's order and then in order of first appearance in later runs.
 */
export function compareReports(reports: ReportModel[], opts: CompareOptions = {}): ComparisonTable {
  if (reports.length < 2) throw invalid('runs', `need at least 2 runs to compare, got ${reports.length}`);
  const noiseFloor = checkNoiseFloor(opts.noiseFloor);
  const labels = columnLabels(reports, opts.labels);
  const indexed = reports.map(index);
  const keys = [...new Set(indexed.flatMap((ix) => [...ix.metrics.keys()]))];

  const rows = keys.map((key): ComparisonRow => {
    const rk = key.slice(0, key.lastIndexOf('/'));
    const entries = indexed.map((ix): Entry | undefined => {
      const hit = ix.metrics.get(key);
      if (hit) return hit;
      const row = ix.rows.get(rk);
      return row ? { row } : undefined;
    });
    const { metric, row } = indexed.map((ix) => ix.metrics.get(key)).find((e) => e !== undefined) as Entry & {
      metric: Metric;
    };
    const cells = entries.map(cellOf);
    const out = cells.map(
      (cell, i): ComparisonCell => ({
        ...cell,
        vsBaseline:
          i === 0
            ? null
            : versus(
                entries[0],
                entries[i],
                [cells[0]!, cell],
                [labels[0]!, labels[i]!],
                metric.higherIsBetter,
                noiseFloor,
              ),
      }),
    );
    const measurement = measurementName(row);
    return {
      key,
      measurementId: row.id,
      step: stepOf(row),
      metric: metric.name,
      measurement,
      label: `${measurement} — ${metric.name}`,
      unit: metric.unit,
      higherIsBetter: metric.higherIsBetter,
      cells: out,
    };
  });

  const warnings: ComparisonWarning[] = reports.flatMap((r, i) =>
    r.rows.flatMap((row) =>
      (row.warnings ?? []).map((w) => ({
        run: labels[i]!,
        measurement: measurementName(row),
        code: w.code,
        message: w.message,
      })),
    ),
  );

  const pathMtu = comparePathMtus(reports);
  return {
    schema: COMPARISON_SCHEMA,
    noiseFloor,
    baseline: labels[0]!,
    runs: reports.map((r, i) => ({
      label: labels[i]!,
      id: r.run.id,
      name: r.run.name,
      state: r.run.state,
      reason: r.run.reason,
      startedMs: r.run.startedMs,
      endedMs: r.run.endedMs,
      cluster: descriptionOf(r),
    })),
    rows,
    warnings,
    ...(pathMtu.length ? { pathMtu } : {}),
  };
}

/** Most runs one comparison loads (each brings every result and sample it stored). */
export const MAX_COMPARE_RUNS = 10;
const MAX_ITEM = 200;

function list(field: string, text: string | null | undefined): string[] | undefined {
  if (text === null || text === undefined) return undefined;
  if (text.length > (MAX_ITEM + 1) * MAX_COMPARE_RUNS)
    throw invalid(field, `longer than ${(MAX_ITEM + 1) * MAX_COMPARE_RUNS} characters`);
  const items = text.split(',').map((s) => s.trim());
  if (items.some((s) => !s))
    throw invalid(field, `must be a comma-separated list without empty items, got '${text.slice(0, 200)}'`);
  if (items.length > MAX_COMPARE_RUNS) throw invalid(field, `at most ${MAX_COMPARE_RUNS} items, got ${items.length}`);
  if (items.some((s) => s.length > MAX_ITEM)) throw invalid(field, `items are at most ${MAX_ITEM} characters`);
  return items;
}

/** Parses `--noise-floor` / `noiseFloor=` text; errors name `field`. */
export function parseNoiseFloor(field: string, text: string | null | undefined): number | undefined {
  if (text === null || text === undefined) return undefined;
  const v = Number(text);
  if (!text.trim() || !(Number.isFinite(v) && v >= 0 && v < 1))
    throw invalid(field, `must be a number in [0, 1) such as 0.03, got '${text.slice(0, 64)}'`);
  return v;
}

/** Parses a `--format` / `format=` value; errors name `field`. */
export function parseComparisonFormat(field: string, text: string | null | undefined): ComparisonFormat {
  if (text === null || text === undefined) return 'md';
  if (!(COMPARISON_FORMATS as readonly string[]).includes(text))
    throw invalid(field, `must be one of ${COMPARISON_FORMATS.join(', ')}, got '${text.slice(0, 64)}'`);
  return text as ComparisonFormat;
}

export interface CompareRequest extends CompareOptions {
  runs: string[];
  format: ComparisonFormat;
}

/**
 * `GET /v1/compare?runs=a,b&format=md|json|csv&labels=x,y&noiseFloor=0.03`:
 * validated here so the REST route and the CLI name the same fields.
 */
export function parseCompareQuery(q: URLSearchParams): CompareRequest {
  const runs = list('runs', q.get('runs'));
  if (!runs || runs.length < 2)
    throw invalid('runs', `need at least 2 comma-separated run ids, got '${(q.get('runs') ?? '').slice(0, 200)}'`);
  const labels = list('labels', q.get('labels'));
  const noiseFloor = parseNoiseFloor('noiseFloor', q.get('noiseFloor'));
  return {
    runs,
    format: parseComparisonFormat('format', q.get('format')),
    ...(labels ? { labels } : {}),
    ...(noiseFloor !== undefined ? { noiseFloor } : {}),
  };
}

/** Splits a `--label a,b` value; errors name `field`. */
export function parseLabels(field: string, text: string | undefined): string[] | undefined {
  return list(field, text);
}
