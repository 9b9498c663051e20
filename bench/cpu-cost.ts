/**
 * CPU per unit of work per lab dataplane, side by side, printed, never
 * asserted: the same scenario (TCP throughput and TCP_CRR through a Service)
 * in a fresh lab per dataplane, each row's CPU-seconds per Gbit or per 1,000
 * connections (kernel system+irq+softirq and the busy time between ticks of both nodes' own CPUs plus the
 * dataplane processes' user time, net of the idle baseline; docs/cpu-cost.md)
 * with its 95% interval over the rounds, and the load average, since other
 * work on the nodes' CPUs counts too.
 *
 *   npm run bench:cpu-cost -- [--dataplanes iptables,nftables,kube-proxy-iptables,...] [--rounds 5] [--duration 3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { trapInterrupts } from '../core/interrupts.js';
import { createLogger } from '../core/log.js';
import { LAB_DATAPLANES, type LabProxyOptions, runInLab } from '../lab/index.js';
import { writeFindings } from './findings.js';

const { values } = parseArgs({
  options: {
    dataplanes: { type: 'string', default: LAB_DATAPLANES.join(',') },
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '3' },
  },
});
const known = new Set<string>(LAB_DATAPLANES);
const dataplanes = (values.dataplanes ?? '').split(',').filter(Boolean);
for (const d of dataplanes)
  if (!known.has(d)) throw new Error(`--dataplanes: '${d}' is not one of ${[...known].join(', ')}`);

const scenario = {
  durationSeconds: Number(values.duration),
  warmupSeconds: 1,
  rounds: Number(values.rounds),
  roundSleepSeconds: 1,
  measurements: [
    { id: 'tput', kind: 'throughput', path: 'service', streams: 1 },
    { id: 'crr', kind: 'rr', path: 'service', mode: 'crr', tool: 'tcp-rr', connections: 8 },
  ],
};

const log = createLogger({ component: 'bench' }, 'warn');
const interrupts = trapInterrupts(log);
const tmp = mkdtempSync(join(tmpdir(), 'cnib-bench-cpu-'));
const lines = [
  '| dataplane | measurement | value | CPU per unit (median) | 95% CI of the mean | client sys / softirq / between ticks (m) | server sys / softirq / between ticks (m) | load avg |',
  '|---|---|---:|---:|---|---|---|---:|',
];
try {
  for (const d of dataplanes) {
    const proxy = (d === 'iptables' ? { mode: d, iptablesBackend: 'legacy' } : { mode: d }) as LabProxyOptions;
    const report = await runInLab(
      { nodes: 2, proxy, dbPath: join(tmp, 'bench.db'), agentWaitMs: 60_000 },
      { ...scenario, name: `cpu cost ${d}` },
      log,
      interrupts.signal,
    );
    const load = loadavg()[0]?.toFixed(1) ?? '?';
    for (const r of report?.rows ?? []) {
      const c = r.metrics.find((m) => m.name === 'cpu-per-gbit' || m.name === 'cpu-per-1k');
      // The work's rate (throughput, requests or transactions per second), not a latency headline.
      const rate = r.metrics.find((m) => m.higherIsBetter);
      const m = (x: number | undefined) => Math.round((x ?? 0) * 1000);
      lines.push(
        `| ${d} | ${r.measurement} | ${rate ? `${rate.value.toFixed(2)} ${rate.unit}` : '—'} | ${c ? `${c.value.toFixed(3)} ${c.unit}` : `— (${r.cpuMissing ?? r.error})`} | ${c?.summary?.ci95 ? c.summary.ci95.map((v) => v.toFixed(3)).join(' … ') : '—'} | ${m(r.cpu?.client.system)} / ${m(r.cpu?.client.softirq)} / ${m(r.cpu?.client.unsampled)} | ${m(r.cpu?.server.system)} / ${m(r.cpu?.server.softirq)} / ${m(r.cpu?.server.unsampled)} | ${load} |`,
      );
    }
    process.stdout.write(`${lines.at(-1)}\n`);
  }
} finally {
  interrupts.dispose();
  rmSync(tmp, { recursive: true, force: true });
}
const body = [
  `CPU per unit of work per lab dataplane, ${scenario.rounds} rounds of ${scenario.durationSeconds} s each, one fresh 2-node lab per dataplane (nodes on their own CPUs).`,
  '',
  ...lines,
  '',
  'Kernel system+irq+softirq and the busy time no tick sampled (a CPU woken by a packet that sleeps again before the next tick) on both nodes own CPUs plus the dataplane processes user time, net of the idle baseline (docs/cpu-cost.md). Other work scheduled on the same CPUs counts too: read the load average beside each row.',
].join('\n');
process.stdout.write(`\n${body}\n`);
await writeFindings({ bench: 'cpu-cost', title: 'CPU per unit of work per lab dataplane', body });
