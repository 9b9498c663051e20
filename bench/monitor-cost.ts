/**
 * What monitoring mode costs, measured, printed, never asserted: a lab whose
 * agents monitor with their defaults (30 s interval, up to 10 peers), and for
 * comparison the same lab with monitoring off. Per node: the agent's CPU
 * (its own and its tools': /proc/<pid>/stat utime+stime+cutime+cstime) in
 * millicores, its memory (VmRSS split into RssAnon, the heap and other
 * private memory, and RssFile, mostly the Node binary's pages; Pss), the host-namespace probe
 * responder's CPU and memory, and the probe traffic on the node's uplink
 * (eth0 of the node namespace: lab control traffic goes over a Unix socket,
 * so this is probe traffic only). Targets: 5 millicores, 80 MiB.
 *
 *   npm run bench:monitor-cost -- [--nodes 5] [--seconds 180] [--warmup 45] [--baseline-seconds 60]
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { AGENT_NODE_FLAGS } from '../agent/index.js';
import { collectorConfig, startCollector } from '../collector/index.js';
import { createLogger } from '../core/log.js';
import { runInNetns } from '../core/netns.js';
import { Lab, type LabNode, startMonitorLab } from '../lab/index.js';
import { writeFindings } from './findings.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '180' },
    warmup: { type: 'string', default: '45' },
    'baseline-seconds': { type: 'string', default: '60' },
  },
});
const nodes = Number(values.nodes);
const log = createLogger({ component: 'bench' }, 'warn');
const TICKS = 100;
const MIB = 1024 * 1024;

interface ProcRead {
  cpuSeconds: number;
  rss: number;
  anon: number;
  file: number;
  pss: number;
}

function readProc(pid: number): ProcRead {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const kb = (text: string, key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    cpuSeconds: (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICKS,
    rss: kb(status, 'VmRSS'),
    anon: kb(status, 'RssAnon'),
    file: kb(status, 'RssFile'),
    pss: kb(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss'),
  };
}

/** The pid in `ns` whose command line contains `script`. */
function pidIn(ns: string, script: string): number | undefined {
  const pids = execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  return pids.find((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(script);
    } catch {
      return false;
    }
  });
}

/**
 * Bytes received and sent on the node's eth0, from the namespace's
 * /proc/net/dev (under nsenter /sys/class/net would show the root namespace's
 * devices, see core/netns.ts).
 */
async function uplinkBytes(node: LabNode): Promise<number> {
  const dev = (await runInNetns({ name: node.ns }, 'probe', 'cat', ['/proc/net/dev'])).stdout;
  const f = /^\s*eth0:\s*(.*)$/m.exec(dev)?.[1]?.trim().split(/\s+/).map(Number);
  // Receive bytes are the first field, transmit bytes the ninth.
  if (!f || !Number.isFinite(f[0]) || !Number.isFinite(f[8]))
    throw new Error(`${node.ns}: no eth0 line in /proc/net/dev`);
  return f[0]! + f[8]!;
}

interface NodeCost {
  node: string;
  agentMcores: number;
  agentRss: number;
  agentAnon: number;
  agentFile: number;
  agentPss: number;
  responderMcores: number | undefined;
  responderRss: number | undefined;
  bytesPerSecond: number;
}

/** Measures every node of `lab` over `seconds`, memory as the peak of samples every 10 s. */
async function measure(lab: Lab, seconds: number): Promise<NodeCost[]> {
  const who = lab.plan.nodes.map((n) => ({
    n,
    agent: pidIn(n.pods[0]?.ns ?? '', 'agent/main.js'),
    responder: pidIn(n.ns, 'host-responder-main.js'),
  }));
  const start = await Promise.all(
    who.map(async (w) => ({
      agent: w.agent ? readProc(w.agent) : undefined,
      responder: w.responder ? readProc(w.responder) : undefined,
      bytes: await uplinkBytes(w.n),
    })),
  );
  const peak = who.map(() => ({ rss: 0, anon: 0, file: 0, pss: 0, responderRss: 0 }));
  const began = Date.now();
  while (Date.now() - began < seconds * 1000) {
    await sleep(Math.min(10_000, seconds * 1000 - (Date.now() - began)));
    who.forEach((w, i) => {
      const a = w.agent ? readProc(w.agent) : undefined;
      const p = peak[i] as (typeof peak)[number];
      if (a)
        [p.rss, p.anon, p.file, p.pss] = [
          Math.max(p.rss, a.rss),
          Math.max(p.anon, a.anon),
          Math.max(p.file, a.file),
          Math.max(p.pss, a.pss),
        ];
      if (w.responder) p.responderRss = Math.max(p.responderRss, readProc(w.responder).rss);
    });
  }
  const wall = (Date.now() - began) / 1000;
  const bytes = await Promise.all(who.map((w) => uplinkBytes(w.n)));
  return who.map((w, i) => {
    const s = start[i] as (typeof start)[number];
    const p = peak[i] as (typeof peak)[number];
    const mc = (pid: number | undefined, from: ProcRead | undefined) =>
      pid && from ? ((readProc(pid).cpuSeconds - from.cpuSeconds) / wall) * 1000 : undefined;
    return {
      node: w.n.name,
      agentMcores: mc(w.agent, s.agent) ?? NaN,
      agentRss: p.rss,
      agentAnon: p.anon,
      agentFile: p.file,
      agentPss: p.pss,
      responderMcores: mc(w.responder, s.responder),
      responderRss: w.responder ? p.responderRss : undefined,
      bytesPerSecond: ((bytes[i] ?? NaN) - s.bytes) / wall,
    };
  });
}

function row(label: string, c: NodeCost): string {
  const mib = (b: number | undefined) => (b === undefined ? '-' : (b / MIB).toFixed(1));
  const mc = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(2));
  return `| ${label} | ${c.node} | ${mc(c.agentMcores)} | ${mib(c.agentRss)} | ${mib(c.agentAnon)} | ${mib(c.agentFile)} | ${mib(c.agentPss)} | ${mc(c.responderMcores)} | ${mib(c.responderRss)} | ${c.bytesPerSecond.toFixed(0)} |`;
}

async function run(
  label: string,
  seconds: number,
  open: () => Promise<{ lab: Lab; close: () => Promise<void> }>,
): Promise<string[]> {
  const s = await open();
  try {
    await sleep(Number(values.warmup) * 1000);
    return (await measure(s.lab, seconds)).map((c) => row(label, c));
  } finally {
    await s.close();
  }
}

/** The same lab and collector with monitoring off. */
async function plainLab(): Promise<{ lab: Lab; close: () => Promise<void> }> {
  const lab = await Lab.create({ nodes, log });
  const c = await startCollector(
    collectorConfig({
      grpcListen: `unix:${lab.controlSocket}`,
      httpHost: '127.0.0.1',
      httpPort: 0,
      dbPath: ':memory:',
      heartbeatIntervalMs: 1000,
      livenessTimeoutMs: 30_000,
    }),
    log,
    lab.services,
  );
  lab.startAgents(c.grpcAddress);
  while (c.registry.available().length < lab.agentCount) await sleep(100);
  return {
    lab,
    close: async () => {
      await c.close();
      await lab.destroy();
    },
  };
}

const rows: string[] = [];
const collectorCpu = process.cpuUsage();
rows.push(
  ...(await run('monitoring (defaults)', Number(values.seconds), () =>
    startMonitorLab({ nodes, monitor: {}, dbPath: ':memory:', agentWaitMs: 60_000 }, log),
  )),
);
const used = process.cpuUsage(collectorCpu);
const collectorMs = (used.user + used.system) / 1000;
if (Number(values['baseline-seconds']) > 0)
  rows.push(...(await run('monitoring off', Number(values['baseline-seconds']), plainLab)));
const text = [
  `monitoring cost on this machine (${new Date().toISOString()}, ${nodes} lab nodes, ${values.seconds} s measured after ${values.warmup} s); targets: agent <= 5 mcores average, <= 80 MiB RSS; agent Node flags: ${AGENT_NODE_FLAGS.join(' ') || '(none)'}`,
  '| mode | node | agent mcores (with its tools) | agent RSS MiB (peak) | RssAnon MiB (peak) | RssFile MiB (peak) | Pss MiB (peak) | host responder mcores | host responder RSS MiB | uplink bytes/s (rx+tx) |',
  '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows,
  `collector (this process, with the lab's set-up) CPU during the monitoring run: ${(collectorMs / 1000).toFixed(1)} s`,
  '',
].join('\n');
process.stdout.write(text);
await writeFindings({ bench: 'monitor-cost', title: 'Monitoring cost of the agent', body: text });
