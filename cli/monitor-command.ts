/**
 * `cni-bench lab monitor`: a lab in monitoring mode. Agents probe their peers
 * and export dataplane gauges; the collector (this process) aggregates them at
 * REST `GET /v1/monitor`, over gRPC and on `/metrics`. It prints the matrix
 * summary every interval until interrupted (or for `--duration` seconds), then
 * tears everything down. The session itself is lab/monitor-session.ts.
 */

import { type FlagValues, numberFlag, switchFlag } from '../core/flags.js';
import { exitCodeFor, trapInterrupts } from '../core/interrupts.js';
import type { Logger } from '../core/log.js';
import { sleep } from '../core/sleep.js';
import type { MonitorSnapshot } from '../gen/cnibench/v1/monitor.js';
import { type MonitorLab, startMonitorLab } from '../lab/index.js';
import { defineCommand } from './command.js';
import { dbFlag, nodesFlag } from './common-flags.js';

/** One line per node: state, coverage, dataplane; then p50/p99 per probe type. */
export function renderMonitorSummary(s: MonitorSnapshot): string {
  const lines = s.nodes.map((n) => {
    const d = n.dataplane;
    const ct = d ? `conntrack ${d.conntrackEntries}/${d.conntrackMax}` : 'no dataplane read yet';
    return `${n.nodeName.padEnd(12)} ${n.state.padEnd(12)} probes ${n.peers.length} peers, probed by ${n.probedOk} ok / ${n.probedFailing} failing; ${ct}; KUBE-SERVICES ${d?.kubeServicesRules ?? '-'}`;
  });
  const lat = (s.summary?.latency ?? []).map(
    (l) =>
      `${l.type} p50 ${Math.round(l.p50Us)} µs p99 ${Math.round(l.p99Us)} µs (${l.samples} ok, ${l.failures} failed)`,
  );
  return `${new Date(s.timeMs).toISOString()} pairs ok ${s.summary?.pairsOk ?? 0}, failing ${s.summary?.pairsFailing ?? 0}, missing ${s.summary?.pairsMissing ?? 0}\n${[...lines, ...lat].map((l) => `  ${l}`).join('\n')}\n`;
}

const flags = {
  nodes: nodesFlag(5),
  interval: numberFlag({
    help: 'seconds between probe rounds and between printed summaries',
    value: 'S',
    default: 30,
    min: 0.5,
  }),
  peers: numberFlag({
    help: "peers each agent probes (default: the agent's own, 10)",
    value: 'K',
    default: undefined,
    min: 1,
    integer: true,
  }),
  duration: numberFlag({
    help: 'stop after this many seconds; 0 runs until interrupted',
    value: 'S',
    default: 0,
    min: 0,
  }),
  json: switchFlag({ help: 'print each snapshot as one JSON line instead of the summary' }),
  db: dbFlag,
};

/** `lab monitor`; returns the exit code. */
export async function monitorCommand(
  values: FlagValues<typeof flags>,
  log: Logger,
  stdout: (s: string) => void,
): Promise<number> {
  const intervalS = values.interval;
  const interrupts = trapInterrupts(log);
  let session: MonitorLab | undefined;
  try {
    session = await startMonitorLab(
      {
        nodes: values.nodes,
        monitor: { intervalS, ...(values.peers !== undefined ? { peers: values.peers } : {}) },
        dbPath: values.db,
        agentWaitMs: 30_000,
      },
      log,
    );
    log.info('monitoring', {
      rest: `${session.collector.httpUrl}/v1/monitor`,
      metrics: `${session.collector.httpUrl}/metrics`,
    });
    const ends = values.duration > 0 ? Date.now() + values.duration * 1000 : Infinity;
    while (!interrupts.signal.aborted && Date.now() < ends) {
      await sleep(Math.min(intervalS * 1000, ends - Date.now()), interrupts.signal);
      const snap = session.collector.monitor.snapshot();
      stdout(values.json ? `${JSON.stringify(snap)}\n` : renderMonitorSummary(snap));
    }
    return interrupts.received() ? exitCodeFor(interrupts.received()) : 0;
  } finally {
    await session?.close();
    interrupts.dispose();
  }
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench lab monitor',
    summary:
      'A lab in monitoring mode: every agent probes its peers (pod, host and Service paths) and exports dataplane gauges; the collector in this process serves REST /v1/monitor and /metrics on 127.0.0.1 and this command prints the matrix summary every interval. Needs root.',
    flags,
    examples: [
      'cni-bench lab monitor --nodes 3 --interval 5 --duration 60',
      'cni-bench lab monitor --json | jq .summary',
    ],
    notes: ['Exit codes: 0 after --duration, 2 bad flags, 130/143 interrupted.'],
  },
  run: (values, _positionals, ctx) => monitorCommand(values, ctx.log, ctx.stdout),
});
