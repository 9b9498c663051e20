/**
 * Run and sweep reports as CSV (RFC 4180, CRLF), one line per number, for
 * spreadsheets and notebooks: every metric with its rounds, dispersion and
 * interval, so nothing a person would want to re-plot is lost. Text a user
 * typed goes through csvText (quoted, and inert to formula evaluation). Pure.
 */
import { csvText } from './escape.js';
import type { ReportModel } from './report.js';
import { summarise } from './stats.js';

const num = (v: number | null | undefined): string =>
  v === null || v === undefined || !Number.isFinite(v) ? '' : String(v);

function line(cells: readonly string[]): string {
  return `${cells.map(csvText).join(',')}\r\n`;
}

export const REPORT_CSV_HEADER = [
  'run_id',
  'run_name',
  'measurement_id',
  'measurement',
  'path',
  'tool',
  'services',
  'metric',
  'unit',
  'higher_is_better',
  'value',
  'rounds',
  'median',
  'mean',
  'stdev',
  'cv',
  'ci95_low',
  'ci95_high',
  'per_round',
  'status',
  'warnings',
] as const;

/** One line per metric of every row (a failed row: one line with its status and no value). */
export function renderReportCsv(model: ReportModel): string {
  let out = line(REPORT_CSV_HEADER);
  for (const r of model.rows) {
    const head = [model.run.id, model.run.name, r.id, r.measurement, r.path, r.tool, num(r.step)];
    const tail = [r.status, r.warnings.map((w) => w.code).join(' ')];
    if (!r.metrics.length) {
      out += line([...head, '', r.unit, '', num(r.value), String(r.rounds), '', '', '', '', '', '', '', ...tail]);
      continue;
    }
    for (const m of r.metrics) {
      const s = m.summary;
      out += line([
        ...head,
        m.name,
        m.unit,
        String(m.higherIsBetter),
        num(m.value),
        String(m.perRound.length),
        num(s?.median),
        num(s?.mean),
        num(s?.stdev),
        num(s?.cv),
        num(s?.ci95?.[0]),
        num(s?.ci95?.[1]),
        m.perRound.map(String).join(' '),
        ...tail,
      ]);
    }
  }
  return out;
}

export const SWEEP_CSV_HEADER = [
  'dataplane',
  'run_id',
  'series_id',
  'series',
  'unit',
  'services',
  'value',
  'rounds',
  'ci95_low',
  'ci95_high',
  'change_vs_first_step',
  'programming_ms',
  'sync_ms',
  'step_status',
] as const;

/** One line per dataplane, series and step of a sweep (the lab sweep's runs, one per dataplane). */
export function renderSweepCsv(runs: readonly { label: string; model: ReportModel }[]): string {
  let out = line(SWEEP_CSV_HEADER);
  for (const { label, model } of runs) {
    const sweep = model.sweep;
    if (!sweep) continue;
    for (const s of sweep.series) {
      sweep.steps.forEach((st, i) => {
        const rounds = s.rounds[i] ?? [];
        const ci = rounds.length >= 2 ? summarise(rounds).ci95 : null;
        out += line([
          label,
          model.run.id,
          s.id,
          s.label,
          s.unit,
          String(st.services),
          num(s.values[i]),
          String(rounds.length),
          num(ci?.[0]),
          num(ci?.[1]),
          num(s.change[i]),
          num(st.programmingMs),
          num(st.syncMs),
          st.status,
        ]);
      });
    }
  }
  return out;
}
