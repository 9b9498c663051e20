/**
 * What a Cilium lab puts on the machine, read from the kernel and the
 * filesystem, so tests can show it existed while the lab ran and that nothing
 * of it is left afterwards: its namespaces, cgroup subtree, run directory,
 * processes (cilium-agent, the control plane), mounts, and the BPF programs
 * Cilium attached to the nodes' devices and cgroups (by id: gone once freed).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cgroup2Root, labCgroupDir, nodeCgroupDir } from '../../../lab/cilium/cgroups.js';
import { labNamespaces } from './host-state.js';

const RUN_DIR = process.env.CNI_BENCH_RUN_DIR ?? '/run/cni-bench';

/** The id of the lab the process `pid` owns, from its state file. */
export function labIdOfPid(pid: number): string | undefined {
  const dir = join(RUN_DIR, 'labs');
  for (const f of existsSync(dir) ? readdirSync(dir) : []) {
    try {
      const s = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { id: string; pid: number };
      if (s.pid === pid) return s.id;
    } catch {
      // being written or removed
    }
  }
  return undefined;
}

/** The node's cilium-agent API socket (root mount namespace path). */
export function agentSocket(labId: string, node: number): string {
  return join(RUN_DIR, labId, 'cilium', `n${node}`, 'cilium', 'cilium.sock');
}

/** Processes whose command line names this lab (its run directory or namespaces) or that sit in its cgroup subtree: cilium-agent, etcd, apiserver, pods. */
export function labIdProcesses(labId: string): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'])
    .toString()
    .split('\n')
    .filter(
      (l) =>
        l.includes(`/run/cni-bench/${labId}`) ||
        l.includes(`cnib-${labId}-`) ||
        l.includes(`/cni-bench/${labId}/`) ||
        inLabCgroup(labId, l.trim().split(' ')[0] ?? ''),
    );
}

/**
 * Whether process `pid` sits in the lab's cgroup subtree: a node's cilium-agent
 * names only paths inside its own mount namespace (/run/cni-bench-node/...), so
 * its command line never names the lab.
 */
function inLabCgroup(labId: string, pid: string): boolean {
  if (!/^\d+$/.test(pid)) return false;
  try {
    const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'));
    return line !== undefined && `${line.slice(3)}/`.includes(`/cni-bench/${labId}/`);
  } catch {
    return false;
  }
}

/**
 * Command lines of the processes that run inside the lab's network namespaces
 * (load generators and servers name no lab path).
 */
export function labNetnsProcesses(labId: string): string[] {
  const inodes = new Set<string>();
  for (const ns of labNamespaces(labId)) {
    try {
      inodes.add(`net:[${statSync(join('/run/netns', ns)).ino}]`);
    } catch {
      // removed meanwhile
    }
  }
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!inodes.has(readlinkSync(`/proc/${pid}/ns/net`))) continue;
      out.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim());
    } catch {
      // exited
    }
  }
  return out;
}

/** Mount points anywhere on the machine under the lab's run directory (any process's mount namespace). */
export function labMounts(labId: string): string[] {
  const out = new Set<string>();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      for (const line of readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n'))
        if (line.includes(`/cni-bench/${labId}`)) out.add(line.split(' ')[4] ?? line);
    } catch {
      // exited
    }
  }
  return [...out];
}

function bpftoolJson(args: string[]): unknown {
  try {
    return JSON.parse(
      execFileSync('bpftool', ['-j', ...args], { stdio: ['ignore', 'pipe', 'ignore'] }).toString() || '[]',
    );
  } catch {
    return [];
  }
}

function ids(value: unknown, keys: readonly string[] = ['id', 'prog_id']): number[] {
  const out: number[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (keys.includes(k) && typeof x === 'number') out.push(x);
        else walk(x);
      }
    }
  };
  walk(value);
  return out;
}

/**
 * A node's Cilium devices (cilium_host, cilium_net, lxc*, cilium_vxlan; they go
 * with its namespace) and the programs attached to its cgroup (socket LB, by id).
 * Device programs are attached with tcx, which Debian 12's bpftool 7.1 does not list.
 */
export function attachedPrograms(labId: string, node: number): { devices: string[]; cgroup: number[] } {
  const ns = `cnib-${labId}-n${node}`;
  let devices: string[] = [];
  try {
    devices = execFileSync('ip', ['-n', ns, '-o', 'link', 'show'], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .split('\n')
      .map((l) => l.split(':')[1]?.trim().split('@')[0] ?? '')
      .filter((d) => /^(cilium_|lxc)/.test(d));
  } catch {
    devices = [];
  }
  const cgroup = ids(bpftoolJson(['cgroup', 'show', nodeCgroupDir(labId, node), 'effective']));
  return { devices, cgroup };
}

/** Program ids among `ids` that still exist in the kernel. */
export function liveProgramIds(progIds: readonly number[]): number[] {
  const live = new Set(ids(bpftoolJson(['prog', 'show'])));
  return progIds.filter((id) => live.has(id));
}

/** Everything of the lab still present; all empty means nothing is left. */
export function ciliumLeftovers(labId: string): Record<string, string[]> {
  return {
    namespaces: labNamespaces(labId),
    processes: labIdProcesses(labId),
    mounts: labMounts(labId),
    cgroup: existsSync(labCgroupDir(labId, cgroup2Root())) ? [labCgroupDir(labId)] : [],
    runDir: existsSync(join(RUN_DIR, labId)) ? [join(RUN_DIR, labId)] : [],
    stateFile: existsSync(join(RUN_DIR, 'labs', `${labId}.json`)) ? [`${labId}.json`] : [],
  };
}

export const NOTHING_LEFT = { namespaces: [], processes: [], mounts: [], cgroup: [], runDir: [], stateFile: [] };

/** Machine-wide sysctls Cilium would change if it could (pkg/datapath/loader/base.go): the lab must leave them alone. */
export function machineSysctls(): Record<string, string> {
  const read = (k: string): string => readFileSync(`/proc/sys/${k.replace(/\./g, '/')}`, 'utf8').trim();
  return Object.fromEntries(
    ['kernel.unprivileged_bpf_disabled', 'kernel.timer_migration', 'net.core.bpf_jit_enable'].map((k) => [k, read(k)]),
  );
}
