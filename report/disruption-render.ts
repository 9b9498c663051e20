/** A disruption timeline as Markdown: the summary per probe kind, then the 100 ms bins around the event, the event marked. */
import { LatencyHistogram } from '../core/histogram.js';
import type { DisruptionSummary, KindBin, Timeline } from './disruption.js';
import type { DisruptionEntry } from './disruption-report.js';
import { mdText } from './escape.js';

const ms = (us: number | null): string => (us === null ? '—' : (us / 1000).toFixed(us < 10_000 ? 2 : 0));

function cell(b: KindBin): string {
  const errors = Object.entries(b.errors)
    .map(([r, n]) => `${n} ${r}`)
    .join(', ');
  const h = b.histogram.total > 0 ? LatencyHistogram.fromProto(b.histogram) : undefined;
  return `${b.attempts} | ${errors || '0'} | ${ms(h ? h.percentile(50) : null)} | ${ms(h ? h.percentile(99) : null)}`;
}

/** `before` and `after` ms of bins around the event (the recovery is always shown whole). */
export function renderDisruption(
  event: string,
  t: Timeline,
  s: DisruptionSummary,
  around = { beforeMs: 1000, afterMs: 1000 },
): string[] {
  const lines = [
    `## Disruption: ${mdText(event)}`,
    '',
    `Open-loop probe stream, ${t.rate} attempts/s of each kind; event at ${(s.eventAtMs / 1000).toFixed(2)} s.`,
    '',
    '| probe | attempts after | errors after (by reason) | first error after event | back at baseline after | baseline p99 | baseline errors |',
    '|---|---:|---|---:|---:|---:|---:|',
  ];
  for (const k of s.kinds) {
    const reasons = Object.entries(k.errorsByReason)
      .map(([r, n]) => `${n} ${r}`)
      .join(', ');
    lines.push(
      `| ${k.kind === 'new' ? 'new connections' : 'kept connections'} | ${k.attemptsAfter} | ${k.errorsAfter}${reasons ? ` (${reasons})` : ''} | ${k.firstErrorMs === null ? '—' : `${k.firstErrorMs} ms`} | ${k.recovered ? `${k.recoveredAfterMs} ms` : `**not back** by the stream's end (${k.recoveredAfterMs} ms)`} | ${ms(k.baseline.p99Us)} ms | ${(100 * k.baseline.errorShare).toFixed(1)}% |`,
    );
  }
  const first = Math.floor(s.eventAtMs / t.binMs);
  const recovered = Math.max(...s.kinds.map((k) => k.recoveredAfterMs));
  const from = Math.max(0, first - Math.ceil(around.beforeMs / t.binMs));
  const to = Math.min(t.bins.length, first + Math.ceil((recovered + around.afterMs) / t.binMs) + 1);
  lines.push(
    '',
    `| t (ms from event) | new: attempts | errors | p50 ms | p99 ms | kept: attempts | errors | p50 ms | p99 ms |`,
    '|---:|---:|---|---:|---:|---:|---|---:|---:|',
  );
  for (let i = from; i < to; i++) {
    const b = t.bins[i] as Timeline['bins'][number];
    const at = i * t.binMs - first * t.binMs;
    lines.push(`| ${i === first ? '**⚡ 0**' : at} | ${cell(b.new)} | ${cell(b.kept)} |`);
  }
  lines.push(
    '',
    `Back at baseline: the end of the last bin after the event whose error share was above twice the baseline's or whose p99 (over at least 100 latencies from that bin on) was above twice the baseline p99 and at least 1 ms above it. Latency from each attempt's intended start (open loop).`,
    '',
  );
  return lines;
}

/** What the event did, in words: "1,000 Services programmed in 840 ms", "198.18.0.5:8179 removed, its server stopped". */
function didLine(e: DisruptionEntry): string {
  const d = e.event.did ?? {};
  const parts = Object.entries(d).map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
  return `${mdText(e.event.event)}: ${mdText(parts.join(', ') || 'done')}; the control plane took ${e.eventTookMs} ms${e.event.error ? `; **the event failed**: ${mdText(e.event.error)}` : ''}.`;
}

/** Every disruption phase of a run: what the event did, then its summary and timeline (or why there is none). */
export function renderDisruptions(entries: readonly DisruptionEntry[]): string[] {
  const out: string[] = [];
  for (const e of entries) {
    if (e.timeline && e.summary) {
      const [head, blank, ...rest] = renderDisruption(e.name, e.timeline, e.summary);
      out.push(
        head as string,
        blank as string,
        didLine(e),
        ...(e.event.service
          ? [
              '',
              `Service ${e.event.service.ip}:${e.event.service.port}, backends ${e.event.service.backends.join(', ')}.`,
            ]
          : []),
        '',
        ...rest,
      );
    } else
      out.push(
        `## Disruption: ${mdText(e.name)}`,
        '',
        didLine(e),
        '',
        `No timeline: ${mdText(e.problem ?? 'unknown')}.`,
        '',
      );
  }
  return out;
}
