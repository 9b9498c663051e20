/**
 * A comparison (compare.ts) as one HTML page: per measurement, bars with
 * intervals across the runs; for sweep rows, each measurement against the
 * number of Services, one line per run; the verdict table. Pure.
 */
import type { ComparisonRow, ComparisonTable } from './compare.js';
import { pathMtuHtmlRows } from './compare-path-mtu.js';
import { htmlText as h } from './escape.js';
import { num, page, table } from './html-page.js';
import { type BarGroup, barChart, lineChart } from './svg-chart.js';

/** "worse (-12.3%, p=0.003)", "within noise (intervals overlap)": the verdict of one cell against the baseline. */
function verdictOf(c: ComparisonRow['cells'][number]): string {
  const v = c.vsBaseline;
  if (!v) return '';
  const rel = v.relDiff === null ? '' : `${v.relDiff > 0 ? '+' : ''}${(v.relDiff * 100).toFixed(1)}%`;
  const p = v.pValue === null ? v.reason : `p=${v.pValue >= 0.001 ? v.pValue.toFixed(3) : v.pValue.toExponential(1)}`;
  return v.verdict === 'better' || v.verdict === 'worse' ? `${v.verdict} (${rel}, ${p})` : `${v.verdict} (${v.reason})`;
}

/** Bars per measurement across the runs, one chart per unit. */
export function comparisonBars(t: ComparisonTable, rows: readonly ComparisonRow[]): string {
  const series = t.runs.map((r) => r.label);
  const byUnit = new Map<string, BarGroup[]>();
  for (const r of rows) {
    const g: BarGroup = {
      name: r.label,
      bars: r.cells.flatMap((c, i) =>
        c.value === null
          ? []
          : [{ name: series[i] ?? '', value: c.value, ...(c.ci95 ? { lo: c.ci95[0], hi: c.ci95[1] } : {}) }],
      ),
    };
    if (g.bars.length) byUnit.set(r.unit, [...(byUnit.get(r.unit) ?? []), g]);
  }
  return [...byUnit]
    .map(([unit, groups]) => barChart({ title: `Measurements in ${unit}`, unit, groups, series }))
    .join('\n');
}

function sweepLines(t: ComparisonTable, rows: readonly ComparisonRow[]): string {
  const byKey = new Map<string, ComparisonRow[]>();
  for (const r of rows)
    if (r.step !== null && r.higherIsBetter)
      byKey.set(`${r.measurementId}|${r.metric}`, [...(byKey.get(`${r.measurementId}|${r.metric}`) ?? []), r]);
  return [...byKey.values()]
    .map((rs) => {
      const sorted = [...rs].sort((a, b) => (a.step ?? 0) - (b.step ?? 0));
      const head = sorted[0] as ComparisonRow;
      return lineChart({
        title: `${head.label.replace(/ @ [\d,]+ Services?/, '')} against the number of Services`,
        xLabel: 'Services',
        yLabel: head.unit,
        xs: sorted.map((r) => (r.step ?? 0).toLocaleString('en-US')),
        series: t.runs.map((run, i) => ({
          name: run.label,
          points: sorted.flatMap((r, x) => {
            const c = r.cells[i];
            return c && c.value !== null
              ? [{ x, y: c.value, ...(c.ci95 ? { lo: c.ci95[0], hi: c.ci95[1] } : {}) }]
              : [];
          }),
        })),
      });
    })
    .join('\n');
}

/** Every row with each run's value and its verdict against the baseline. */
export function verdictTable(t: ComparisonTable): string {
  const verdictClass = (v: string | undefined) => (v === 'worse' ? 'bad' : v === 'better' ? 'good' : '');
  return table(
    ['measurement', 'unit', ...t.runs.map((r) => r.label), 'verdict'],
    t.rows.map((r) => [
      h(r.label),
      h(r.unit),
      ...r.cells.map((c) => (c.value === null ? `— ${h(c.status)}` : num(c.value))),
      r.cells
        .slice(1)
        .map(
          (c, i) =>
            `<span class="${verdictClass(c.vsBaseline?.verdict)}">${h(`${t.runs.length > 2 ? `${t.runs[i + 1]?.label}: ` : ''}${verdictOf(c)}`)}</span>`,
        )
        .join('; '),
    ]),
  );
}

export function renderComparisonHtml(t: ComparisonTable): string {
  const body = [
    `<h1>cni-bench comparison: ${h(t.runs.map((r) => r.label).join(' vs '))}</h1>`,
    `<p>Baseline: <b>${h(t.baseline)}</b>; changes under ${(t.noiseFloor * 100).toFixed(1)}% count as noise.</p>`,
    table(
      ['column', 'run', 'name', 'state'],
      t.runs.map((r) => [h(r.label), h(r.id), h(r.name), h(r.state)]),
    ),
    '<h2>Measurements across runs</h2>',
    comparisonBars(
      t,
      t.rows.filter((r) => r.step === null),
    ),
    sweepLines(t, t.rows),
    '<h2>Verdicts</h2>',
    verdictTable(t),
    ...(t.pathMtu
      ? ['<h2>Path MTU per path</h2>', table(['path', ...t.runs.map((r) => r.label)], pathMtuHtmlRows(t.pathMtu))]
      : []),
  ].join('\n');
  return page('cni-bench comparison', body);
}
