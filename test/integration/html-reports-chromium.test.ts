/**
 * The HTML reports in a real headless Chromium (DevTools protocol): run,
 * sweep, comparison and study pages rendered from real lab output
 * (test/fixtures/reports/, see its README) load with no console error, no
 * CSP violation and no request beyond the file itself; every chart has the
 * series and points the data holds (counted from the data, not written
 * here), intervals where there are rounds, the crossovers the sweep found;
 * a hostile run name stays text. Screenshots go to test-artifacts/. Skips,
 * saying why, only where no Chromium is installed (scripts/setup.sh --test
 * installs it).
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { compareReports } from '../../report/compare.js';
import { renderComparisonHtml } from '../../report/html-compare.js';
import { renderReportHtml } from '../../report/html-report.js';
import { renderStudyHtml } from '../../report/html-study.js';
import { renderSweepHtml } from '../../report/html-sweep.js';
import type { ReportModel } from '../../report/report.js';
import type { StudyModel } from '../../report/study.js';
import { compareSweeps, type SweepComparison } from '../../report/sweep.js';
import { CHART_PROBE, chromiumPath, visit } from '../support/helpers/chromium.js';

const skip = chromiumPath()
  ? false
  : 'chromium is not installed (apt-get install chromium, or bash scripts/setup.sh --test)';
const ARTIFACTS = resolve('test-artifacts');
const fixture = (name: string): any =>
  JSON.parse(readFileSync(new URL(`../../../test/fixtures/reports/${name}`, import.meta.url), 'utf8'));

interface Chart {
  title: string;
  kind: 'line' | 'bar';
  series: { name: string; points: { x: string; y: number }[]; intervals: number; drawn: boolean }[];
  crossovers: number[];
  bars: { series: string; value: number; width: number }[];
  barIntervals: number;
}

async function load(name: string, html: string): Promise<Chart[]> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name}.html`);
  writeFileSync(file, html);
  const url = pathToFileURL(file).href;
  const v = await visit(url, CHART_PROBE);
  writeFileSync(join(ARTIFACTS, `${name}.png`), v.png);
  assert.deepEqual(v.errors, [], `${name}: console errors`);
  assert.deepEqual(v.requests, [url], `${name}: the page fetched something`);
  assert.ok(v.png.length > 10_000, `${name}: screenshot of ${v.png.length} bytes`);
  return JSON.parse(String(v.value)) as Chart[];
}

function sweepRuns(): { label: string; model: ReportModel }[] {
  return fixture('lab-sweep.json').runs.map((r: { mode: string; report: ReportModel }) => ({
    label: r.mode,
    model: r.report,
  }));
}

/** Checks each sweep line chart against the comparison it was drawn from. */
function checkSweepCharts(charts: Chart[], c: SweepComparison): void {
  for (const s of c.series) {
    const chart = charts.find((x) => x.kind === 'line' && x.title === `${s.label} against the number of Services`);
    assert.ok(chart, `no chart for ${s.label}: ${charts.map((x) => x.title).join(', ')}`);
    assert.deepEqual(
      chart.series.map((x) => x.name),
      c.runs,
    );
    s.byRun.forEach((r, i) => {
      const drawn = chart.series[i] as Chart['series'][number];
      const expected = r.values.flatMap((y, at) =>
        y === null ? [] : [{ x: (c.steps[at] as number).toLocaleString('en-US'), y }],
      );
      assert.deepEqual(drawn.points, expected, `${s.label} / ${c.runs[i]}`);
      assert.equal(drawn.intervals, r.rounds.filter((x) => (x?.length ?? 0) >= 2).length);
      assert.ok(drawn.drawn);
    });
    assert.equal(chart.crossovers.length, s.crossovers.filter((x) => x.between).length, `${s.label} crossovers`);
  }
}

test('sweep page: rates against Services per dataplane with intervals and crossovers; bars; dataplane per phase', {
  skip,
  timeout: 400_000,
}, async (t) => {
  const runs = sweepRuns();
  const c = compareSweeps(
    runs.map((r) => ({ label: r.label, sweep: r.model.sweep as NonNullable<ReportModel['sweep']> })),
  );
  const charts = await load('sweep', renderSweepHtml(runs, c));
  checkSweepCharts(charts, c);
  t.diagnostic(
    `crossovers: ${c.series.flatMap((s) => s.crossovers.filter((x) => x.between).map((x) => x.text)).join(' | ') || 'none'}`,
  );
  const last = Math.max(...c.steps);
  const bars = charts.filter((x) => x.kind === 'bar').flatMap((x) => x.bars);
  const expected = runs.flatMap((r) =>
    r.model.rows.filter((row) => row.step === last && Number.isFinite(row.metrics[0]?.value)),
  );
  assert.equal(bars.length, expected.length);
  assert.ok(bars.every((b) => b.width > 0 || b.value === 0));
  const processes = runs.some((r) => r.model.rows.some((row) => row.dataplane.some((d) => d.processes.length)));
  const dp = charts.filter((x) => /^Dataplane (CPU|memory) per phase/.test(x.title));
  assert.equal(dp.length, processes ? 2 : 0);
});

test('run page: bars with intervals per measurement, and the sweep of a sweep run', {
  skip,
  timeout: 400_000,
}, async () => {
  const run = fixture('lab-run.json') as ReportModel;
  const charts = await load('run', renderReportHtml(run));
  const rows = run.rows.filter((r) => r.step === undefined && Number.isFinite(r.metrics[0]?.value));
  const bars = charts.filter((x) => x.kind === 'bar');
  assert.equal(bars.flatMap((x) => x.bars).length, rows.length);
  assert.equal(bars.length, new Set(rows.map((r) => r.metrics[0]?.unit)).size, 'one chart per unit');
  assert.equal(
    bars.reduce((n, x) => n + x.barIntervals, 0),
    rows.filter((r) => r.metrics[0]?.summary?.ci95).length,
  );
  const sweepRun = sweepRuns()[0]?.model as ReportModel;
  const sweepCharts = await load('run-sweep', renderReportHtml(sweepRun));
  const lines = sweepCharts.filter((x) => x.kind === 'line' && x.title.endsWith('against the number of Services'));
  assert.equal(lines.flatMap((x) => x.series).length, sweepRun.sweep?.series.length);
});

test('comparison page: bars per measurement across runs, sweep rows against Services, verdicts', {
  skip,
  timeout: 400_000,
}, async () => {
  const runs = sweepRuns();
  const table = compareReports(
    runs.map((r) => r.model),
    { labels: runs.map((r) => r.label) },
  );
  const charts = await load('compare', renderComparisonHtml(table));
  const lines = charts.filter((x) => x.kind === 'line');
  const stepped = new Set(
    table.rows.filter((r) => r.step !== null && r.higherIsBetter).map((r) => `${r.measurementId}|${r.metric}`),
  );
  assert.equal(lines.length, stepped.size);
  for (const l of lines)
    assert.deepEqual(
      l.series.map((s) => s.name),
      table.runs.map((r) => r.label),
    );
});

test('a hostile run name and measurement stay text: no element, no attribute breaks out', {
  skip,
  timeout: 400_000,
}, async () => {
  const run = fixture('lab-run.json') as ReportModel;
  const evil = '"><script>console.error("xss")</script><img src=x onerror=console.error(1)>';
  const hostile: ReportModel = {
    ...run,
    run: { ...run.run, name: evil },
    rows: run.rows.map((r) => ({ ...r, measurement: `${r.measurement} ${evil}` })),
  };
  const html = renderReportHtml(hostile);
  assert.ok(!html.includes('<script'), 'a script element');
  assert.ok(!/<img/i.test(html), 'an img element');
  const charts = await load('run-hostile', html);
  assert.ok(charts.length > 0);
});

test('study page: matrix bars across dataplanes, sweep curves, and the dataplane CPU and memory per phase', {
  skip,
  timeout: 400_000,
}, async (t) => {
  const f = fixture('lab-study.json');
  const study = f.study as StudyModel;
  const runs = (f.runs as { dataplane: string; matrix?: ReportModel }[]).map((r) => ({
    label: r.dataplane,
    ...(r.matrix ? { matrix: r.matrix } : {}),
  }));
  const charts = await load('study', renderStudyHtml(study, runs));
  if (study.sweep) checkSweepCharts(charts, study.sweep);
  const bars = charts.filter((x) => x.kind === 'bar').flatMap((x) => x.bars);
  const cells = (study.matrix?.rows ?? [])
    .filter((r) => r.step === null)
    .flatMap((r) => r.cells.filter((c) => c.value !== null));
  assert.equal(bars.length, cells.length);
  // CPU and memory: one series per dataplane and process, one point per phase that sampled it.
  for (const [title, pick] of [
    ['Dataplane CPU per phase', (p: { cpuMillicoresAvg: number | null }) => p.cpuMillicoresAvg],
    ['Dataplane memory per phase', () => 1],
  ] as const) {
    const chart = charts.find((x) => x.title.startsWith(title));
    const expected = new Map<string, number>();
    for (const r of runs)
      r.matrix?.rows.forEach((row) => {
        const procs = new Set<string>();
        for (const d of row.dataplane)
          for (const p of d.processes) if (pick(p) !== null) procs.add(`${r.label}: ${d.node} ${p.name}`);
        for (const k of procs) expected.set(k, (expected.get(k) ?? 0) + 1);
      });
    t.diagnostic(`${title}: ${[...expected].map(([k, n]) => `${k} (${n})`).join(', ') || 'no process samples'}`);
    if (!expected.size) {
      assert.equal(chart, undefined);
      continue;
    }
    assert.ok(chart, `${title} missing`);
    assert.deepEqual(new Map(chart.series.map((s) => [s.name, s.points.length])), expected);
  }
});
