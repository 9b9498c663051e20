/**
 * Where a lab's CPU goes, from /proc: the CPU time of every process in the
 * lab's own network namespaces (fabric: etcd, kube-apiserver,
 * kube-controller-manager, the apiserver forwarder; nodes: cilium-agents;
 * pods: the cni-bench agents), of this process (the collector's frontend
 * runs in it), and of the whole machine (/proc/stat), so "everything else on
 * the machine" is the rest. Snapshots are cheap enough to take around a
 * write phase; deltaCpu() is pure.
 */
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { parseProcStat } from '../agent/index.js';
import { parseError } from '../core/errors.js';

const TICKS_PER_S = 100;

export interface CpuSnapshot {
  atMs: number;
  /** CPU seconds by group ("fabric kube-apiserver", "node cilium-agent", ...), summed over its processes. */
  groups: Map<string, number>;
  /** This process (user + system). */
  selfS: number;
  /** The machine: busy and all CPU seconds from /proc/stat's first line. */
  busyS: number;
  totalS: number;
}

/** Pure: busy and total seconds from /proc/stat's aggregate "cpu" line (busy: all but idle and iowait). */
export function parseProcStatCpu(text: string): { busyS: number; totalS: number } {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  const f = line?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  if (f.length < 8 || f.some((n) => !Number.isFinite(n)))
    throw parseError('/proc/stat', text.slice(0, 200), 'no aggregate "cpu" line with 8 counters');
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busyS: (total - idle) / TICKS_PER_S, totalS: total / TICKS_PER_S };
}

/** Namespace inode -> the group prefix for processes in it ("fabric", "node", "pod"). */
export function labNamespaces(plan: {
  fabricNs: string;
  nodes: readonly { ns: string; pods: readonly { ns: string }[] }[];
}): Map<number, string> {
  const out = new Map<number, string>();
  const add = (ns: string, kind: string): void => {
    out.set(statSync(`/run/netns/${ns}`).ino, kind);
  };
  add(plan.fabricNs, 'fabric');
  for (const n of plan.nodes) {
    add(n.ns, 'node');
    for (const p of n.pods) add(p.ns, 'pod');
  }
  return out;
}

/** Reads every process of the lab's namespaces, this process and the machine's counters. */
export function cpuSnapshot(namespaces: ReadonlyMap<number, string>): CpuSnapshot {
  const groups = new Map<string, number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const link = readlinkSync(`/proc/${pid}/ns/net`);
      const kind = namespaces.get(Number(/\[(\d+)\]/.exec(link)?.[1]));
      if (!kind) continue;
      const st = parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      const key = `${kind} ${st.comm}`;
      groups.set(key, (groups.get(key) ?? 0) + (st.utimeTicks + st.stimeTicks) / TICKS_PER_S);
    } catch {
      // The process exited between readdir and read: its time is gone from both snapshots' view.
    }
  }
  const self = process.cpuUsage();
  return {
    atMs: Date.now(),
    groups,
    selfS: (self.user + self.system) / 1e6,
    ...parseProcStatCpu(readFileSync('/proc/stat', 'utf8')),
  };
}

export interface CpuDelta {
  wallS: number;
  /** CPU seconds per group over the window, this process as "lab process (collector frontend)", largest first. */
  groups: [string, number][];
  /** Machine CPU seconds busy, and what the lab's processes and this one did not account for. */
  machineBusyS: number;
  otherS: number;
  cores: number;
}

/** Pure: what happened between two snapshots. Groups that used under 10 ms are left out. */
export function deltaCpu(a: CpuSnapshot, b: CpuSnapshot): CpuDelta {
  const groups: [string, number][] = [...b.groups]
    .map(([k, v]): [string, number] => [k, v - (a.groups.get(k) ?? 0)])
    .concat([['lab process (collector frontend)', b.selfS - a.selfS]])
    .filter(([, v]) => v >= 0.01)
    .sort((x, y) => y[1] - x[1]);
  const ours = groups.reduce((s, [, v]) => s + v, 0);
  const machineBusyS = b.busyS - a.busyS;
  const wallS = (b.atMs - a.atMs) / 1000;
  return {
    wallS,
    groups,
    machineBusyS,
    otherS: Math.max(0, machineBusyS - ours),
    cores: wallS > 0 ? (b.totalS - a.totalS) / wallS : 0,
  };
}
