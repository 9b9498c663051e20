/**
 * What restarting each lab dataplane's agent does to live traffic, side by
 * side, printed, never asserted: per dataplane a fresh 2-node lab, one
 * disruption phase whose event restarts the client node's dataplane agent
 * (docs/disruption.md), and its timeline summary: errors after the event on
 * new and on kept connections, the first error, the time back at baseline,
 * and how long the agent took to be ready and to have its endpoints back.
 * The agents are real: kube-proxy v1.37 (kube-proxy-iptables,
 * kube-proxy-nftables) and cilium-agent (cilium, cilium-vxlan). The emulated
 * kube-proxy dataplanes (iptables, nftables: rules, no process) have no agent
 * to restart and refuse the event.
 *
 *   npm run bench:restart -- [--dataplanes kube-proxy-iptables,kube-proxy-nftables,cilium,cilium-vxlan]
 *                            [--events dataplane-restart,backend-link-down]
 *                            [--duration 20] [--event-at 3] [--rate 100]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { trapInterrupts } from '../core/interrupts.js';
import { createLogger } from '../core/log.js';
import {
  CILIUM_DATAPLANES,
  dataplaneProxy,
  KUBE_PROXY_DATAPLANES,
  LAB_DATAPLANES,
  type LabDataplane,
  runInLab,
} from '../lab/index.js';
import type { DisruptionEntry } from '../report/disruption-report.js';
import { writeFindings } from './findings.js';

const { values } = parseArgs({
  options: {
    dataplanes: { type: 'string', default: [...KUBE_PROXY_DATAPLANES, ...CILIUM_DATAPLANES].join(',') },
    events: { type: 'string', default: 'dataplane-restart' },
    duration: { type: 'string', default: '20' },
    'event-at': { type: 'string', default: '3' },
    rate: { type: 'string', default: '100' },
  },
});
const known = new Set<string>(LAB_DATAPLANES);
const dataplanes = (values.dataplanes ?? '').split(',').filter(Boolean);
for (const d of dataplanes)
  if (!known.has(d)) throw new Error(`--dataplanes: '${d}' is not one of ${[...known].join(', ')}`);
const events = (values.events ?? '').split(',').filter(Boolean);

const measurements = events.map((event) => ({
  kind: 'disruption',
  event,
  durationSeconds: Number(values.duration),
  eventAtSeconds: Number(values['event-at']),
  rate: Number(values.rate),
}));

const log = createLogger({ component: 'bench' }, 'warn');
const interrupts = trapInterrupts(log);
const tmp = mkdtempSync(join(tmpdir(), 'cnib-bench-restart-'));
const lines = [
  '| dataplane | event | new: errors / attempts after | kept: errors / attempts after | first error (new, kept) | back at baseline (new, kept) | agent ready | endpoints back | load avg |',
  '|---|---|---:|---:|---|---|---:|---:|---:|',
];

const msOf = (v: unknown): string => (typeof v === 'number' ? `${(v / 1000).toFixed(1)} s` : '—');

/** One table line per disruption phase of a report. */
function row(d: string, e: DisruptionEntry, load: string): string {
  const kind = (k: 'new' | 'kept') => e.summary?.kinds.find((x) => x.kind === k);
  const errors = (k: 'new' | 'kept') => {
    const s = kind(k);
    if (!s) return '—';
    const reasons = Object.entries(s.errorsByReason)
      .map(([r, n]) => `${n} ${r}`)
      .join(', ');
    return `${s.errorsAfter} / ${s.attemptsAfter}${reasons ? ` (${reasons})` : ''}`;
  };
  const first = (k: 'new' | 'kept') => {
    const v = kind(k)?.firstErrorMs;
    return v === null || v === undefined ? '—' : `${v} ms`;
  };
  const back = (k: 'new' | 'kept') => {
    const s = kind(k);
    if (!s) return '—';
    return s.recovered ? `${s.recoveredAfterMs} ms` : `not back (${s.recoveredAfterMs} ms)`;
  };
  const did = e.event.did ?? {};
  return `| ${d} | ${e.event.event}${e.event.error ? ` (failed: ${e.event.error})` : ''}${e.problem ? ` (${e.problem})` : ''} | ${errors('new')} | ${errors('kept')} | ${first('new')}, ${first('kept')} | ${back('new')}, ${back('kept')} | ${msOf(did.readyMs)} | ${msOf(did.endpointsReadyMs)} | ${load} |`;
}

try {
  for (const d of dataplanes) {
    if (interrupts.signal.aborted) break;
    const proxy = dataplaneProxy(d as LabDataplane, { iptablesBackend: 'legacy' });
    const report = await runInLab(
      { nodes: 2, proxy, dbPath: join(tmp, `${d}.db`), agentWaitMs: 120_000 },
      { name: `restart ${d}`, measurements },
      log,
      interrupts.signal,
    ).catch((err: Error) => {
      lines.push(`| ${d} | ${events.join(', ')} | refused or failed: ${err.message.split('\n')[0]} | | | | | | |`);
      return undefined;
    });
    const load = loadavg()[0]?.toFixed(1) ?? '?';
    for (const e of report?.disruptions ?? []) lines.push(row(d, e, load));
    process.stdout.write(`${lines.at(-1)}\n`);
  }
} finally {
  interrupts.dispose();
  rmSync(tmp, { recursive: true, force: true });
}
const body = [
  `A dataplane event into a steady open-loop probe stream (${values.rate}/s new connections and ${values.rate}/s requests on 4 kept connections, through a Service with two backends), event at ${values['event-at']} s of a ${values.duration} s stream, one fresh 2-node lab per dataplane; dataplane-restart stops the client node's agent (SIGTERM) and starts it with the same config.`,
  '',
  ...lines,
  '',
  'Errors and attempts count from the event to the end of the stream. Back at baseline: the end of the last 100 ms bin whose error share was above twice the baseline or whose p99 (over at least 100 latencies from that bin on) was above twice the baseline p99 and at least 1 ms above it (docs/disruption.md). Agent ready, from the stop: kube-proxy: /healthz 200 with a sync of the new process done (as kube-proxy reports it); Cilium: `cilium-dbg status` OK. Endpoints back (Cilium only): every pod of the node a ready endpoint again. kube-proxy leaves its rules in place when it stops, as in a pod restart.',
].join('\n');
process.stdout.write(`\n${body}\n`);
await writeFindings({
  bench: 'restart',
  title: 'Dataplane agent restarts under a probe stream, per lab dataplane',
  body,
});
