/**
 * Programming latency of a Service scale sweep as text: per step and
 * dataplane, how long from the step's first Service write until every node's
 * dataplane showed the step (KUBE-SERVICES, nftables service-ips, Cilium's LB
 * maps), found by polling the agents' samples, with the polling resolution.
 * Pure.
 */
import { mdText } from './escape.js';
import type { SweepComparison, SweepStep } from './sweep.js';

/** "2.4 s (±0.3)": the upper bound and how far below it the moment may lie; "—" when not measured. */
export function latencyText(latencyMs: number | null, resolutionMs: number | null): string {
  if (latencyMs === null) return '—';
  return `${(latencyMs / 1000).toFixed(1)} s${resolutionMs !== null ? ` (−${(resolutionMs / 1000).toFixed(1)})` : ''}`;
}

/** The sentence every latency table ends with: what was timed and the polling resolution. */
export function latencyNote(pollPauseMs: number | null): string {
  const pause = pollPauseMs === null ? '' : ` every ${pollPauseMs} ms plus the time one round of samples takes`;
  return `Programming latency: from the step's first Service write until the round of dataplane samples that showed every node holding the whole step had arrived (KUBE-SERVICES rules, nftables service-ips elements, or Cilium LB frontends with all their backends, read by each node's agent), polled${pause}, never a sleep. The figure is an upper bound; in parentheses how much earlier the last node may have caught up (the previous round still saw a node behind, or the first round came after the last write). The lab's kube-proxy emulation writes every node's rules itself, so its latency is its write time; Cilium's includes the apiserver, the agents' watch and their LB map updates.`;
}

/** One sweep's latency column cells (the single-run table in markdown.ts). */
export function stepLatency(st: SweepStep): string {
  return latencyText(st.programmingLatencyMs, st.latencyResolutionMs);
}

/** The sweeps' programming latencies side by side. */
export function renderLatencyComparison(c: SweepComparison): string[] {
  if (!c.latency.some((r) => r.latencyMs.some((v) => v !== null))) return [];
  const head = ['dummy Services', ...c.runs];
  return [
    '## Programming latency',
    '',
    `| ${head.map(mdText).join(' | ')} |`,
    `|${head.map(() => '---:').join('|')}|`,
    ...c.steps.map(
      (n, i) =>
        `| ${n.toLocaleString('en-US')} | ${c.latency.map((r) => latencyText(r.latencyMs[i] ?? null, r.resolutionMs[i] ?? null)).join(' | ')} |`,
    ),
    '',
    latencyNote(c.latency.find((r) => r.pollPauseMs !== null)?.pollPauseMs ?? null),
    '',
  ];
}
