/**
 * The lab sweep (one run per dataplane) as one HTML page: each measurement's
 * rate against the number of Services, one line per dataplane with 95%
 * intervals and the crossover marked where one dataplane overtakes another;
 * bars per measurement across dataplanes at the largest step; the dataplanes'
 * CPU and memory per phase; each run's own table. Pure.
 */
import { htmlText as h } from './escape.js';
import { dataplaneCharts, num, page, table } from './html-page.js';
import { barsByUnit, rowsTable } from './html-report.js';
import type { ReportModel } from './report.js';
import { summarise } from './stats.js';
import { lineChart } from './svg-chart.js';
import type { SweepComparison } from './sweep.js';

/** Where `services` falls on the categorical axis of `steps` (fractional between two steps). */
export function stepPosition(steps: readonly number[], services: number): number {
  for (let i = 0; i + 1 < steps.length; i++) {
    const a = steps[i] as number;
    const b = steps[i + 1] as number;
    if (services >= a && services <= b) return b === a ? i : i + (services - a) / (b - a);
  }
  return services <= (steps[0] ?? 0) ? 0 : steps.length - 1;
}

export function sweepCharts(c: SweepComparison): string {
  const xs = c.steps.map((s) => s.toLocaleString('en-US'));
  return c.series
    .map((s) => {
      const marks = s.crossovers.flatMap((x) =>
        x.between
          ? [
              {
                x: x.estimate !== null ? stepPosition(c.steps, x.estimate) : stepPosition(c.steps, x.between[0]) + 0.5,
                label: `crossover${x.estimate !== null ? ` ≈ ${num(x.estimate)}` : ''}`,
              },
            ]
          : [],
      );
      const chart = lineChart({
        title: `${s.label} against the number of Services`,
        xLabel: 'Services',
        yLabel: s.unit,
        xs,
        series: s.byRun.map((r, i) => ({
          name: c.runs[i] ?? `run ${i + 1}`,
          points: r.values.flatMap((y, x) => {
            if (y === null) return [];
            const rounds = r.rounds[x] ?? [];
            const ci = rounds.length >= 2 ? summarise(rounds).ci95 : null;
            return [{ x, y, ...(ci ? { lo: ci[0], hi: ci[1] } : {}) }];
          }),
        })),
        marks,
      });
      const words = s.crossovers.map((x) => `<li>${h(x.text)}</li>`).join('');
      return `${chart}${words ? `<ul class="note">${words}</ul>` : ''}`;
    })
    .join('\n');
}

export function renderSweepHtml(runs: readonly { label: string; model: ReportModel }[], c?: SweepComparison): string {
  const last = (m: ReportModel) => Math.max(...(m.sweep?.steps.map((s) => s.services) ?? [0]));
  const body = [
    `<h1>cni-bench Service scale sweep: ${h(runs.map((r) => r.label).join(' vs '))}</h1>`,
    table(
      ['dataplane', 'run', 'state', 'steps'],
      runs.map((r) => [
        h(r.label),
        h(r.model.run.id),
        h(r.model.run.state) + (r.model.run.reason ? ` (${h(r.model.run.reason)})` : ''),
        h(r.model.sweep?.steps.map((s) => s.services.toLocaleString('en-US')).join(', ') ?? '—'),
      ]),
    ),
    '<h2>Rates against the number of Services</h2>',
    c?.steps.length ? sweepCharts(c) : '<p class="note">No sweep steps shared by the runs.</p>',
    '<h2>Each measurement across dataplanes at the largest step</h2>',
    barsByUnit(runs, (r) => r.step !== undefined && r.step === Math.max(...runs.map((x) => last(x.model)))),
    dataplaneCharts(runs),
    ...runs.map((r) => `<h2>${h(r.label)}: every phase</h2>${rowsTable(r.model)}`),
  ].join('\n');
  return page('cni-bench sweep', body);
}
