/**
 * The lab study (study.ts) as one HTML page: the headline, each matrix
 * measurement across dataplanes as bars with intervals and its verdict, the
 * sweep curves per dataplane with the crossovers marked, each dataplane's
 * scale verdicts, and the dataplanes' CPU and memory per matrix phase. Pure.
 */
import { htmlText as h } from './escape.js';
import { comparisonBars, verdictTable } from './html-compare.js';
import { dataplaneCharts, num, page, table } from './html-page.js';
import { sweepCharts } from './html-sweep.js';
import type { ReportModel } from './report.js';
import type { StudyModel } from './study.js';

export function renderStudyHtml(s: StudyModel, runs: readonly { label: string; matrix?: ReportModel }[]): string {
  const st = s.settings;
  const matrixRuns = runs.flatMap((r) => (r.matrix ? [{ label: r.label, model: r.matrix }] : []));
  const body = [
    `<h1>cni-bench study: ${h(s.dataplanes.map((d) => d.label).join(' vs '))}</h1>`,
    `<p>Wall time ${s.wallSeconds.toFixed(0)} s; ${s.dataplanes.length} fresh labs of ${st.nodes} nodes. Matrix: ${st.rounds} rounds of ${st.durationSeconds} s. Sweep: ${h(st.steps.map((n) => n.toLocaleString('en-US')).join(' / '))} Services, ${st.sweepRounds} rounds of ${st.sweepDurationSeconds} s per step.</p>`,
    table(
      ['dataplane', 'detected in the lab', 'matrix', 'sweep', 'lab wall time'],
      s.dataplanes.map((d) => [
        h(d.label),
        h(d.cluster || '—'),
        h(d.matrixState),
        h(d.sweepState) + (d.error ? ` <span class="bad">${h(d.error)}</span>` : ''),
        `${d.seconds.toFixed(0)} s`,
      ]),
      [4],
    ),
    '<h2>Headline</h2>',
    `<ul>${(s.headline.length ? s.headline : ['nothing was measured']).map((x) => `<li>${h(x)}</li>`).join('')}</ul>`,
    '<h2>Measurement matrix</h2>',
    s.matrix
      ? comparisonBars(
          s.matrix,
          s.matrix.rows.filter((r) => r.step === null),
        ) + verdictTable(s.matrix)
      : '<p class="note">Fewer than two dataplanes ran their matrix: nothing to put side by side.</p>',
    '<h2>Service scale sweep</h2>',
    s.sweep?.steps.length ? sweepCharts(s.sweep) : '<p class="note">No sweep steps shared by the dataplanes.</p>',
    s.scaleVerdicts.length
      ? table(
          ['dataplane', 'measurement', 'unit', 'first step', 'last step', 'change', 'verdict'],
          s.scaleVerdicts.map((v) => [
            h(v.dataplane),
            h(v.series),
            h(v.unit),
            `${num(v.baseline)} @ ${v.fromServices.toLocaleString('en-US')}`,
            `${num(v.last)} @ ${v.toServices.toLocaleString('en-US')}`,
            v.relDiff === null ? '—' : `${(v.relDiff * 100).toFixed(1)}%`,
            h(`${v.verdict} (${v.reason})`),
          ]),
        )
      : '',
    dataplaneCharts(matrixRuns),
  ].join('\n');
  return page('cni-bench study', body);
}
