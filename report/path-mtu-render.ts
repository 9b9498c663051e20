/**
 * The "Path MTU" section of a Markdown report: one line per path a run
 * measured (pod-to-pod, Service, host ...), as the client's agent found it
 * with DF pings after the tool (agent/observe/pmtu.ts). A black hole is
 * flagged because TCP over it stalls on full-size segments until a timeout.
 */
import type { PathMtu } from '../gen/cnibench/v1/agent.js';
import { mdText } from './escape.js';
import type { ReportRow } from './report-row.js';

/** Pure: the rows' path MTUs, one per path and target (the first row that measured it). */
export function pathMtusOf(rows: readonly ReportRow[]): { path: string; mtu: PathMtu }[] {
  const seen = new Map<string, { path: string; mtu: PathMtu }>();
  for (const r of rows) {
    if (!r.pathMtu) continue;
    const key = `${r.path}\u0000${r.pathMtu.target}`;
    if (!seen.has(key)) seen.set(key, { path: r.path, mtu: r.pathMtu });
  }
  return [...seen.values()];
}

function verdict(m: PathMtu): string {
  if (m.error) return `not measured: ${m.error}`;
  if (m.blackHole)
    return `**PMTU black hole**: packets above ${m.effectiveMtu} bytes (up to the interface's ${m.localMtu}) are dropped without an ICMP fragmentation-needed`;
  if (m.effectiveMtu < m.localMtu)
    return `narrower than the interface: ${m.announcedMtu ? `${m.announcedMtu} announced by ${m.announcedFrom ? `${m.announcedFrom} (ICMP fragmentation-needed)` : "the client's own kernel (a route MTU or a cached PMTU)"}` : 'no announcement seen'}`;
  return 'the interface MTU reaches the far end';
}

export function renderPathMtu(rows: readonly ReportRow[]): string[] {
  const all = pathMtusOf(rows);
  if (!all.length) return [];
  return [
    '## Path MTU',
    '',
    '| path | target | path MTU (bytes) | client interface MTU | verdict |',
    '|---|---|---:|---:|---|',
    ...all.map(
      ({ path, mtu }) =>
        `| ${mdText(path)} | ${mdText(mtu.target)}${path === 'service' ? ' (its backend)' : ''} | ${mtu.error ? '—' : mtu.effectiveMtu} | ${mtu.localMtu || '—'} | ${mdText(verdict(mtu))} |`,
    ),
    '',
    "Path MTU: the largest IP packet that got an echo reply with don't-fragment set, from the client's namespace after its tool ran (once per run and target). A Service path is measured toward its backend, as a Service address answers no ping.",
    '',
  ];
}
