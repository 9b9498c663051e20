/**
 * `cni-bench lab monitor`: a lab in monitoring mode. Agents probe their peers
 * and export dataplane gauges; the collector (this process) aggregates them at
 * REST `GET /v1/monitor`, over gRPC and on `/metrics`. It prints the matrix
 * summary every interval until interrupted (or for `--duration` seconds), then
 * tears everything down. The session itself is lab/monitor-session.ts.
 */
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { validationError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { MonitorSnapshot } from '../gen/cnibench/v1/monitor.js';
import { type MonitorLab, startMonitorLab } from '../lab/index.js';
import { exitCodeFor, trapInterrupts } from '../core/interrupts.js';

export const MONITOR_USAGE = `  cni-bench lab monitor [--nodes N] [--interval S] [--peers K] [--duration S] [--json] [--db FILE]
                monitoring mode: peer probes and dataplane gauges; REST /v1/monitor and /metrics on 127.0.0.1
`;

/** One line per node: state, coverage, dataplane; then p50/p99 per probe type. */
export function renderMonitorSummary(s: MonitorSnapshot): string {
  const lines = s.nodes.map((n) => {
    const d = n.dataplane;
    const ct = d ? `conntrack ${d.conntrackEntries}/${d.conntrackMax}` : 'no dataplane read yet';
    return `${n.nodeName.padEnd(12)} ${n.state.padEnd(12)} probes ${n.peers.length} peers, probed by ${n.probedOk} ok / ${n.probedFailing} failing; ${ct}; KUBE-SERVICES ${d?.kubeServicesRules ?? '-'}`;
  });
  const lat = (s.summary?.latency ?? []).map((l) => `${l.type} p50 ${Math.round(l.p50Us)} µs p99 ${Math.round(l.p99Us)} µs (${l.samples} ok, ${l.failures} failed)`);
  return `${new Date(s.timeMs).toISOString()} pairs ok ${s.summary?.pairsOk ?? 0}, failing ${s.summary?.pairsFailing ?? 0}, missing ${s.summary?.pairsMissing ?? 0}\n${[...lines, ...lat].map((l) => `  ${l}`).join('\n')}\n`;
}

function num(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const v = Number(text);
  if (!Number.isFinite(v) || v < min) throw validationError([{ path: name, message: `must be a number >= ${min}, got '${text}'` }], 'options');
  return v;
}

/** `lab monitor [flags]`; returns the exit code. */
export async function monitorCommand(argv: string[], log: Logger, dbDefault: string): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: { nodes: { type: 'string' }, interval: { type: 'string' }, peers: { type: 'string' }, duration: { type: 'string' }, json: { type: 'boolean', default: false }, db: { type: 'string' } },
  });
  const intervalS = num('--interval', values.interval, 30, 0.5);
  const durationS = num('--duration', values.duration, 0, 0);
  const interrupts = trapInterrupts(log);
  let session: MonitorLab | undefined;
  try {
    session = await startMonitorLab({ nodes: num('--nodes', values.nodes, 5, 2), monitor: { intervalS, ...(values.peers ? { peers: num('--peers', values.peers, 10, 1) } : {}) }, dbPath: values.db ?? dbDefault, agentWaitMs: 30_000 }, log);
    log.info('monitoring', { rest: `${session.collector.httpUrl}/v1/monitor`, metrics: `${session.collector.httpUrl}/metrics` });
    const ends = durationS > 0 ? Date.now() + durationS * 1000 : Infinity;
    while (!interrupts.signal.aborted && Date.now() < ends) {
      await sleep(Math.min(intervalS * 1000, ends - Date.now()), undefined, { signal: interrupts.signal }).catch(() => undefined);
      const snap = session.collector.monitor.snapshot();
      process.stdout.write(values.json ? `${JSON.stringify(snap)}\n` : renderMonitorSummary(snap));
    }
    return interrupts.received() ? exitCodeFor(interrupts.received()) : 0;
  } finally {
    await session?.close();
    interrupts.dispose();
  }
}
