/**
 * The disruption phases of a run as charts: per phase, errors and p99 per
 * 100 ms bin of both probe kinds, the event marked where it happened on the
 * stream's clock. Pure.
 */
import { LatencyHistogram } from '../core/histogram.js';
import type { KindBin } from './disruption.js';
import type { DisruptionEntry } from './disruption-report.js';
import { htmlText as h } from './escape.js';
import { lineChart } from './svg-chart.js';

const errors = (b: KindBin): number => Object.values(b.errors).reduce((a, v) => a + v, 0);
const p99Ms = (b: KindBin): number | null =>
  b.histogram.total > 0 ? LatencyHistogram.fromProto(b.histogram).percentile(99) / 1000 : null;

/** Two charts per phase with a timeline (errors per bin, p99 per bin); a line of text for one without. */
export function disruptionCharts(entries: readonly DisruptionEntry[]): string {
  return entries
    .map((e) => {
      const t = e.timeline;
      const s = e.summary;
      if (!t || !s) return `<h3>${h(e.name)}</h3><p>No timeline: ${h(e.problem ?? 'unknown')}.</p>`;
      const eventAt = s.eventAtMs / t.binMs;
      // A label every second (bins are 100 ms): seconds from the stream's start.
      const perSecond = Math.max(1, Math.round(1000 / t.binMs));
      const xs = t.bins.map((_, i) => (i % perSecond === 0 ? `${((i * t.binMs) / 1000).toFixed(0)} s` : ''));
      const marks = [{ x: eventAt, label: `⚡ ${e.event.event}` }];
      const series = (f: (b: KindBin) => number | null) =>
        (['new', 'kept'] as const).map((k) => ({
          name: k === 'new' ? 'new connections' : 'kept connections',
          points: t.bins.flatMap((b, x) => {
            const y = f(b[k]);
            return y === null ? [] : [{ x, y }];
          }),
        }));
      return [
        `<h3>${h(e.name)}</h3>`,
        lineChart({
          title: 'Failed attempts per 100 ms',
          xLabel: 'stream time',
          yLabel: 'errors',
          xs,
          series: series(errors),
          marks,
        }),
        lineChart({
          title: 'p99 latency per 100 ms (ms)',
          xLabel: 'stream time',
          yLabel: 'ms',
          xs,
          series: series(p99Ms),
          marks,
        }),
      ].join('\n');
    })
    .join('\n');
}
