/**
 * Run and sweep reports as CSV and the format table, on reports captured from
 * real lab runs (test/fixtures/reports/): one CSV line per metric with its
 * rounds and interval, user text inert for spreadsheets, every format named
 * with its media type, a bad format refused naming the field.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { isCniBenchError } from '../../../core/errors.js';
import { REPORT_CSV_HEADER, renderReportCsv, renderSweepCsv, SWEEP_CSV_HEADER } from '../../../report/csv.js';
import type { ReportModel } from '../../../report/report.js';
import { parseReportFormat, REPORT_FORMATS, renderReport } from '../../../report/report-formats.js';

const fixture = (name: string): any =>
  JSON.parse(readFileSync(new URL(`../../../../test/fixtures/reports/${name}`, import.meta.url), 'utf8'));

/** RFC 4180 records of a CSV text (quoted fields may hold commas and quotes). */
function records(text: string): string[][] {
  const out: string[][] = [];
  for (const line of text.split('\r\n').filter(Boolean)) {
    const cells: string[] = [];
    let cur = '';
    let quoted = false;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (quoted && c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = !quoted;
      else if (c === ',' && !quoted) {
        cells.push(cur);
        cur = '';
      } else cur += c;
    }
    cells.push(cur);
    out.push(cells);
  }
  return out;
}

test('run CSV: one line per metric, its rounds, median and interval as the model holds them', () => {
  const model = fixture('lab-run.json') as ReportModel;
  const rows = records(renderReportCsv(model));
  assert.deepEqual(rows[0], [...REPORT_CSV_HEADER]);
  const metrics = model.rows.flatMap((r) => r.metrics.map((m) => ({ r, m })));
  assert.equal(rows.length - 1, metrics.length);
  metrics.forEach(({ r, m }, i) => {
    const cell = Object.fromEntries(REPORT_CSV_HEADER.map((h, j) => [h, rows[i + 1]?.[j]]));
    assert.equal(cell.measurement_id, r.id);
    assert.equal(cell.metric, m.name);
    assert.equal(Number(cell.value), m.value);
    assert.deepEqual(cell.per_round?.split(' ').map(Number), m.perRound);
    assert.equal(cell.ci95_low === '' ? null : Number(cell.ci95_low), m.summary?.ci95?.[0] ?? null);
  });
});

test('sweep CSV: one line per dataplane, series and step', () => {
  const runs = fixture('lab-sweep.json').runs.map((r: any) => ({ label: r.mode, model: r.report as ReportModel }));
  const rows = records(renderSweepCsv(runs));
  assert.deepEqual(rows[0], [...SWEEP_CSV_HEADER]);
  const n = runs.reduce((k: number, r: any) => k + r.model.sweep.series.length * r.model.sweep.steps.length, 0);
  assert.equal(rows.length - 1, n);
  const first = runs[0].model.sweep;
  assert.equal(Number(rows[1]?.[6]), first.series[0].values[0]);
  assert.equal(rows[1]?.[0], runs[0].label);
});

test('user text in CSV is quoted and inert: a formula stays text', () => {
  const model = fixture('lab-run.json') as ReportModel;
  const hostile = { ...model, run: { ...model.run, name: '=HYPERLINK("http://x","y"),1' } };
  const csv = renderReportCsv(hostile);
  const name = records(csv)[1]?.[1];
  assert.equal(name, `'=HYPERLINK("http://x","y"),1`);
});

test('every format renders with its media type; a bad one is refused naming the field', () => {
  const model = fixture('lab-run.json') as ReportModel;
  const types = Object.fromEntries(REPORT_FORMATS.map((f) => [f, renderReport(model, f).contentType]));
  assert.deepEqual(types, {
    md: 'text/markdown; charset=utf-8',
    json: 'application/json',
    html: 'text/html; charset=utf-8',
    csv: 'text/csv; charset=utf-8',
  });
  assert.deepEqual(JSON.parse(renderReport(model, 'json').body), model);
  assert.throws(
    () => parseReportFormat('format', 'pdf'),
    (e: unknown) => isCniBenchError(e) && e.message === "format: must be one of md, json, html, csv, got 'pdf'",
  );
});
