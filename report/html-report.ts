/**
 * A run's report as one self-contained HTML page: the headline table, bars
 * with intervals per measurement, the sweep's values against the number of
 * Services, the disruption timelines, and the dataplane's CPU and memory per
 * phase. Pure.
 */
import { clusterLabel } from './compare.js';
import { disruptionCharts } from './disruption-html.js';
import { htmlText as h } from './escape.js';
import { dataplaneCharts, num, page, table } from './html-page.js';
import type { ReportModel } from './report.js';
import { summarise } from './stats.js';
import { type BarGroup, barChart, lineChart } from './svg-chart.js';
import type { SweepTable } from './sweep.js';

/** One bar chart per unit: each measurement's headline with its interval. */
export function barsByUnit(
  runs: readonly { label: string; model: ReportModel }[],
  rowFilter: (r: ReportModel['rows'][number]) => boolean = (r) => r.step === undefined,
): string {
  const series = runs.map((r) => r.label);
  const byUnit = new Map<string, Map<string, BarGroup>>();
  for (const { label, model } of runs) {
    for (const r of model.rows.filter(rowFilter)) {
      const m = r.metrics[0];
      if (!m || !Number.isFinite(m.value)) continue;
      const groups = byUnit.get(m.unit) ?? new Map<string, BarGroup>();
      byUnit.set(m.unit, groups);
      const g = groups.get(r.measurement) ?? { name: r.measurement, bars: [] };
      groups.set(r.measurement, g);
      const ci = m.summary?.ci95;
      g.bars.push({ name: label, value: m.value, ...(ci ? { lo: ci[0], hi: ci[1] } : {}) });
    }
  }
  return [...byUnit]
    .map(([unit, groups]) => barChart({ title: `Measurements in ${unit}`, unit, groups: [...groups.values()], series }))
    .join('\n');
}

/** A sweep's series against the number of Services; one chart per unit, one line per measurement. */
export function sweepChartsOneRun(sweep: SweepTable): string {
  const xs = sweep.steps.map((s) => s.services.toLocaleString('en-US'));
  const units = [...new Set(sweep.series.map((s) => s.unit))];
  return units
    .map((unit) =>
      lineChart({
        title: `${unit} against the number of Services`,
        xLabel: 'Services',
        yLabel: unit,
        xs,
        series: sweep.series
          .filter((s) => s.unit === unit)
          .map((s) => ({
            name: s.label,
            points: s.values.flatMap((y, x) => {
              if (y === null) return [];
              const ci = (s.rounds[x]?.length ?? 0) >= 2 ? summarise(s.rounds[x] as number[]).ci95 : null;
              return [{ x, y, ...(ci ? { lo: ci[0], hi: ci[1] } : {}) }];
            }),
          })),
      }),
    )
    .join('\n');
}

export function rowsTable(model: ReportModel): string {
  return table(
    ['measurement', 'path', 'tool', 'value', 'unit', '95% CI', 'rounds', 'status', 'warnings'],
    model.rows.map((r) => {
      const s = r.metrics[0]?.summary;
      const ci = s?.ci95 ? `${num(s.ci95[0])} – ${num(s.ci95[1])}` : '—';
      const value = r.invalid ? `<span class="bad">invalid (${h(r.invalid.code)})</span>` : num(r.value);
      return [
        h(r.measurement),
        h(r.path),
        h(r.tool),
        value,
        h(r.unit),
        ci,
        String(r.rounds),
        h(r.status) + (r.error ? ` <span class="bad">${h(r.error)}</span>` : ''),
        r.warnings.map((w) => `<span class="warn" title="${h(w.message)}">${h(w.code)}</span>`).join(' '),
      ];
    }),
    [3, 5, 6],
  );
}

export function renderReportHtml(model: ReportModel): string {
  const { run } = model;
  const secs = run.endedMs && run.startedMs ? ((run.endedMs - run.startedMs) / 1000).toFixed(1) : '?';
  const runs = [{ label: run.name, model }];
  const body = [
    `<h1>cni-bench report: ${h(run.name)} <small>(${h(run.id)})</small></h1>`,
    `<p>State: <b>${h(run.state)}</b>${run.reason ? ` (${h(run.reason)})` : ''}; wall time ${secs} s.</p>`,
    `<p>Cluster: ${h(clusterLabel(model.cluster?.description ?? null))}</p>`,
    ...(model.cluster?.description?.hardware ? [`<p>Hardware: ${h(model.cluster.description.hardware)}</p>`] : []),
    '<h2>Measurements</h2>',
    rowsTable(model),
    barsByUnit(runs),
    ...(model.sweep ? ['<h2>Service scale sweep</h2>', sweepChartsOneRun(model.sweep)] : []),
    ...(model.disruptions ? ['<h2>Disruption timelines</h2>', disruptionCharts(model.disruptions)] : []),
    dataplaneCharts(runs),
  ].join('\n');
  return page(`cni-bench report: ${run.name}`, body);
}
