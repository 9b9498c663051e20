/**
 * Renders a study (study.ts) as one Markdown report: what ran and for how
 * long, the headline, the measurement matrix side by side with intervals and
 * verdicts (compare-render.ts), the sweep curves with their crossovers and
 * programming latency (markdown.ts), each dataplane's sweep against its own
 * step 0, and what a longer run adds. Pure.
 */
import { formatNumber, formatPercent, renderComparisonMarkdown } from './compare-render.js';
import { mdText } from './escape.js';
import { renderSweepComparison } from './markdown.js';
import type { ScaleVerdict, StudyModel } from './study.js';

/** One Markdown heading level deeper: a rendered sub-report nests under the study's headings. */
function nest(text: string): string {
  return text.replace(/^(#+) /gm, '#$1 ');
}

function ci(c: [number, number] | null): string {
  return c ? `${formatNumber(c[0])}–${formatNumber(c[1])}` : '—';
}

function scaleRow(v: ScaleVerdict): string {
  const cells = [
    v.dataplane,
    `${v.series} (${v.unit})`,
    v.baseline === null ? '—' : formatNumber(v.baseline),
    ci(v.baselineCi95),
    v.last === null ? '—' : formatNumber(v.last),
    ci(v.lastCi95),
    v.relDiff === null ? '—' : formatPercent(v.relDiff),
    `${v.verdict}${v.pValue !== null ? ` (p=${v.pValue < 0.001 ? v.pValue.toExponential(1) : v.pValue.toFixed(3)})` : ''}`,
  ];
  return `| ${cells.map(mdText).join(' | ')} |`;
}

function minutes(s: number): string {
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

/** What the defaults leave out, for the reader deciding whether to run longer. */
export const LONGER_RUN_NOTE =
  "A longer run adds: more rounds (`--rounds`, `--sweep-rounds`) narrow every interval (the half-width shrinks with the square root of the rounds) so smaller differences get a verdict instead of 'within noise'; longer rounds (`--duration`, `--sweep-duration`) average out scheduler noise on shared cores; steps up to the study's 30,000 Services (`--steps 0,5000,10000,20000,30000`; a Cilium lab then starts with `bpf-lb-map-max` sized for them) show the iptables curve to the end, where the reference study's crossover near 20,000 Services lies, at the price of minutes of programming per step; `--dataplanes` can add nftables.";

export function renderStudyMarkdown(s: StudyModel): string {
  const st = s.settings;
  const lines: string[] = [
    `# cni-bench study: ${s.dataplanes.map((d) => mdText(d.label)).join(' vs ')}`,
    '',
    `Wall time ${minutes(s.wallSeconds)} (${s.wallSeconds.toFixed(0)} s) for ${s.dataplanes.length} fresh lab${s.dataplanes.length === 1 ? '' : 's'} of ${st.nodes} nodes, one per dataplane. Matrix: ${st.rounds} rounds of ${st.durationSeconds} s (warm-up ${st.warmupSeconds} s). Sweep: ${st.steps.map((n) => n.toLocaleString('en-US')).join(' / ')} dummy Services of ${st.endpointsPerService} endpoints, ${st.sweepRounds} rounds of ${st.sweepDurationSeconds} s per step.`,
    '',
    '| dataplane | detected in the lab | matrix | sweep | lab wall time |',
    '|---|---|---|---|---:|',
    ...s.dataplanes.map(
      (d) =>
        `| ${mdText(d.label)} | ${mdText(d.cluster || '—')} | ${mdText(d.matrixState)} | ${mdText(d.sweepState)} | ${d.seconds.toFixed(0)} s |${d.error ? ` ${mdText(d.error)}` : ''}`,
    ),
    '',
    '## Headline',
    '',
    ...(s.headline.length ? s.headline.map((h) => `- ${mdText(h)}`) : ['- nothing was measured']),
    '',
  ];
  if (s.matrix)
    lines.push(
      nest(renderComparisonMarkdown(s.matrix)).replace(/^## cni-bench comparison: /m, '## Measurement matrix: '),
    );
  else
    lines.push(
      '## Measurement matrix',
      '',
      'Fewer than two dataplanes ran their matrix: nothing to put side by side.',
      '',
    );
  if (s.sweep) {
    lines.push(nest(renderSweepComparison(s.sweep)));
    if (s.scaleVerdicts.length) {
      lines.push(
        '## Each dataplane against its own first step',
        '',
        '| dataplane | measurement | first step | 95% CI | last step | 95% CI | change | verdict |',
        '|---|---|---:|---:|---:|---:|---:|---|',
        ...s.scaleVerdicts.map(scaleRow),
        '',
        `First step ${s.scaleVerdicts[0]?.fromServices.toLocaleString('en-US')} Services, last ${s.scaleVerdicts[0]?.toServices.toLocaleString('en-US')}. The verdict compares the rounds (Welch's t-test p < 0.05, disjoint 95% intervals, and a change above the noise floor); 'within noise' means no significant change.`,
        '',
      );
    }
  }
  lines.push('## What a longer run adds', '', LONGER_RUN_NOTE, '');
  return `${lines.join('\n')}\n`;
}
