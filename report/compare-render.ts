/**
 * Renders a comparison table (compare.ts) for people (Markdown), for programs
 * (JSON, schema `cni-bench.comparison/v1`) and for spreadsheets (CSV, RFC 4180).
 * Pure.
 */

import type { ComparisonCell, ComparisonFormat, ComparisonRow, ComparisonTable } from './compare.js';
import { renderPathMtuComparison } from './compare-path-mtu.js';
import { csvText, mdText } from './escape.js';
import { renderComparisonHtml } from './html-compare.js';

/** Plain numbers people can read: thousands separators from 1,000 on, four significant digits below. */
export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return v > 0 ? '∞' : v < 0 ? '-∞' : 'NaN';
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
  return v.toLocaleString('en-US', { maximumSignificantDigits: 4 });
}

/** "+12.3%", "-4.0%", "±0.0%". */
export function formatPercent(rel: number): string {
  if (!Number.isFinite(rel)) return rel > 0 ? '+∞%' : '-∞%';
  const p = (rel * 100).toFixed(1);
  if (Number(p) === 0) return '±0.0%';
  return rel > 0 ? `+${p}%` : `${p}%`;
}

function formatP(p: number): string {
  return p >= 0.001 ? `p=${p.toFixed(3)}` : `p=${p.toExponential(1)}`;
}

const md = mdText;

function valueCell(c: ComparisonCell): string {
  const mark = c.warnings.length ? '⚠ ' : '';
  if (c.value === null) return `${mark}—${c.status === 'missing' ? '' : ` (${c.status})`}`;
  const half = c.ci95 ? ` ± ${formatNumber((c.ci95[1] - c.ci95[0]) / 2)}` : '';
  return `${mark}${formatNumber(c.value)}${half}`;
}

function deltaCell(c: ComparisonCell): string {
  return c.vsBaseline?.relDiff === null || c.vsBaseline?.relDiff === undefined
    ? '—'
    : formatPercent(c.vsBaseline.relDiff);
}

/** "run-b better (+12.3%, p=0.003)", "within noise (intervals overlap)", "noise unknown (…)". */
export function verdictText(label: string, c: ComparisonCell): string {
  const v = c.vsBaseline;
  if (!v) return '';
  if ((v.verdict === 'better' || v.verdict === 'worse') && v.relDiff !== null) {
    return `${label} ${v.verdict} (${formatPercent(v.relDiff)}, ${v.pValue === null ? v.reason : formatP(v.pValue)})`;
  }
  return `${v.verdict} (${v.reason})`;
}

function verdicts(t: ComparisonTable, r: ComparisonRow): string {
  const many = t.runs.length > 2;
  return r.cells
    .slice(1)
    .map((c, i) => {
      const label = t.runs[i + 1]!.label;
      const text = verdictText(label, c);
      return many && !text.startsWith(label) ? `${label}: ${text}` : text;
    })
    .join('; ');
}

function dash(s: string): string {
  return s || '—';
}

function headerBlock(t: ComparisonTable): string[] {
  const head = [
    'column',
    'run',
    'name',
    'state',
    'kube-proxy',
    'CNI',
    'CNI mode',
    'kernel',
    'Kubernetes',
    'node type',
    'OS, runtime',
    'hardware',
  ];
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...t.runs.map((r, i) => {
      const d = r.cluster;
      const cells = [
        `${r.label}${i === 0 ? ' (baseline)' : ''}`,
        r.id,
        r.name,
        `${r.state}${r.reason ? ` (${r.reason})` : ''}`,
        d?.kubeProxyMode,
        d?.cni,
        d?.cniMode,
        d?.kernel,
        d?.kubernetesVersion,
        d?.nodeType,
        [d?.osImage, d?.containerRuntime].filter(Boolean).join(', '),
        d?.hardware,
      ];
      return `| ${cells.map((c) => md(dash(c ?? ''))).join(' | ')} |`;
    }),
  ];
}

/** One row per measurement metric, one column per run, then the change against the baseline and the verdict. */
export function renderComparisonMarkdown(t: ComparisonTable): string {
  const others = t.runs.slice(1);
  const head = [
    'measurement',
    'unit',
    ...t.runs.map((r) => r.label),
    ...others.map((r) => (others.length > 1 ? `Δ ${r.label} vs ${t.baseline}` : `Δ vs ${t.baseline}`)),
    'verdict',
  ];
  const align = ['---', '---', ...t.runs.map(() => '---:'), ...others.map(() => '---:'), '---'];
  const lines = [
    `# cni-bench comparison: ${t.runs.map((r) => md(r.label)).join(' vs ')}`,
    '',
    ...headerBlock(t),
    '',
    `| ${head.map(md).join(' | ')} |`,
    `|${align.join('|')}|`,
    ...t.rows.map((r) => {
      const cells = [r.label, r.unit, ...r.cells.map(valueCell), ...r.cells.slice(1).map(deltaCell), verdicts(t, r)];
      return `| ${cells.map((c) => md(dash(c))).join(' | ')} |`;
    }),
    '',
    `Values are the headline of each run (median of the rounds for rates, merged-histogram percentiles for latency); ± is the half-width of the 95% confidence interval of the mean of the rounds. Δ is the change of the median of the rounds against ${t.baseline}. Better or worse needs a Welch t-test below alpha 0.05, a change above the ${Number((t.noiseFloor * 100).toFixed(2))}% noise floor and disjoint intervals; with one round, only a change far above the noise floor counts.`,
  ];
  if (t.pathMtu)
    lines.push(
      '',
      ...renderPathMtuComparison(
        t.runs.map((r) => r.label),
        t.pathMtu,
      ),
    );
  if (t.warnings.length) {
    lines.push(
      '',
      '## Warnings',
      '',
      ...t.warnings.map((w) => `- ⚠ ${md(w.run)}, ${md(w.measurement)}: ${md(w.code)}: ${md(w.message)}`),
    );
  }
  const failed = t.runs.flatMap((run, i) => {
    const seen = new Set<string>();
    return t.rows.flatMap((r) => {
      const c = r.cells[i]!;
      if (c.status === 'succeeded' || c.status === 'missing' || seen.has(r.measurement)) return [];
      seen.add(r.measurement);
      return [`- ${md(run.label)}, ${md(r.measurement)}: ${c.status}${c.error ? `: ${md(c.error)}` : ''}`];
    });
  });
  if (failed.length) lines.push('', '## Measurements without a value', '', ...failed);
  return `${lines.join('\n')}\n`;
}

/**
 * The table as JSON, schema `cni-bench.comparison/v1`:
 * `{ schema, noiseFloor, baseline, runs: [{ label, id, name, state, reason, startedMs, endedMs, cluster }],
 *    rows: [{ key, measurementId, step, metric, measurement, label, unit, higherIsBetter,
 *             cells: [{ value, n, ci95, cv, status, error, warnings, vsBaseline: { relDiff, pValue, verdict, reason } | null }] }],
 *    warnings: [{ run, measurement, code, message }],
 *    pathMtu?: [{ path, differs, cells: [{ pathMtu, interfaceMtu, blackHole, targets, error } | null] }] }`
 * (pathMtu only when a run measured one: compare-path-mtu.ts).
 * cells follow runs; null means no value; non-finite numbers (a relDiff against a zero baseline, a cv over a zero mean) are null.
 */
export function renderComparisonJson(t: ComparisonTable): string {
  return `${JSON.stringify(t, null, 2)}\n`;
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
export const csvField = csvText;

function csvNum(v: number | null | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) ? '' : String(v);
}

export const CSV_COLUMNS = [
  'measurement',
  'metric',
  'unit',
  'run',
  'value',
  'n',
  'ci_low',
  'ci_high',
  'cv',
  'rel_diff',
  'verdict',
  'warnings',
] as const;

/** One line per row and run; empty fields where there is no number (baseline rel_diff and verdict included). Lines end CRLF. */
export function renderComparisonCsv(t: ComparisonTable): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of t.rows) {
    r.cells.forEach((c, i) => {
      const fields = [
        r.measurement,
        r.metric,
        r.unit,
        t.runs[i]!.label,
        csvNum(c.value),
        String(c.n),
        csvNum(c.ci95?.[0]),
        csvNum(c.ci95?.[1]),
        csvNum(c.cv),
        csvNum(c.vsBaseline?.relDiff),
        c.vsBaseline?.verdict ?? '',
        c.warnings.join(';'),
      ];
      lines.push(fields.map(csvField).join(','));
    });
  }
  return `${lines.join('\r\n')}\r\n`;
}

const CONTENT_TYPES: Record<ComparisonFormat, string> = {
  md: 'text/markdown; charset=utf-8',
  json: 'application/json',
  csv: 'text/csv; charset=utf-8; header=present',
  html: 'text/html; charset=utf-8',
};

/** The table in one format with its media type, for the REST route and the CLI alike. */
export function renderComparison(t: ComparisonTable, format: ComparisonFormat): { contentType: string; body: string } {
  const body =
    format === 'md'
      ? renderComparisonMarkdown(t)
      : format === 'json'
        ? renderComparisonJson(t)
        : format === 'html'
          ? renderComparisonHtml(t)
          : renderComparisonCsv(t);
  return { contentType: CONTENT_TYPES[format], body };
}
