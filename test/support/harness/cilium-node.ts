/**
 * One real Cilium node for tests: the real cilium-agent (v1.20.2, built by
 * scripts/build-cilium.sh) in a throwaway network namespace against the
 * harness apiserver, with kube-proxy replacement and socket LB on, and its own
 * bpffs, /run and cgroup subtree, as the lab runs one per node
 * (../shared/cilium-notes.md, "Verified on this kind of machine"):
 *
 *   ip netns exec <ns>   (a private mount namespace with a fresh /sys)
 *     mount bpffs on /sys/fs/bpf, tmpfs on /run, cgroup2 privately, and the
 *     node's own cgroup subtree (made here, under the machine's cgroup2 root)
 *     bound onto /run/cilium/cgroupv2 (the agent's --cgroup-root), and
 *     /proc/sys/kernel read-only (machine-wide sysctls are not the test's)
 *     exec cilium-agent ...
 *
 * Its state dies with it: the namespace, the bpffs and the /run tmpfs vanish
 * with the mount namespace, the cgroup subtree is removed by stop(), and
 * processes moved into the subtree are killed first.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, type KubernetesObject, KubernetesObjectApi } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { run } from '../../../core/process.js';
import { type ApiBridge, startApiBridge } from './api-bridge.js';
import { kubeConfigFrom } from './apply.js';
import { type Component, startComponent } from './component.js';
import type { ControlPlane } from './control-plane.js';
import { ensureNode } from './kube-proxy.js';
import { createThrowawayNetns, type ThrowawayNetns } from './kube-proxy-netns.js';
import { TOOLS_DIR } from './tools.js';

export const CILIUM_VERSION = 'v1.20.2';
export const CILIUM_DIR = join(TOOLS_DIR, `cilium-${CILIUM_VERSION}`);
/** Where cgroup2 is mounted (on a hybrid hierarchy, /sys/fs/cgroup/unified): socket LB needs cgroup2. */
function cgroup2Root(): string {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [pre, post] = line.split(' - ');
    if (pre && post?.startsWith('cgroup2 ')) return pre.split(' ')[4] as string;
  }
  throw new Error('cilium harness: no cgroup2 hierarchy is mounted');
}
const CGROUP_PREFIX = 'cnibench-cilium-';

/** Why Cilium tests cannot run here, or false: the build's marker is missing. */
export function ciliumMissing(): string | false {
  return existsSync(join(CILIUM_DIR, '.complete'))
    ? false
    : `real Cilium is not built: run 'bash scripts/build-cilium.sh' (${CILIUM_DIR}/.complete missing)`;
}

export interface CiliumNodeOptions {
  nodeName: string;
  nodeIp: string;
  podCidr: string;
}

export interface CiliumNode {
  readonly netns: ThrowawayNetns;
  /** The node's namespace as a path the agent's --host-netns takes. */
  readonly netnsPath: string;
  /** The cilium-agent's pid (bpftool and cilium-dbg enter its mount namespace). */
  readonly pid: number;
  /** The node's cgroup subtree on the machine's cgroup2 (socket LB applies to processes inside it). */
  readonly cgroup: string;
  tail(lines: number): string;
  /** Runs cilium-dbg against this agent (in its mount namespace), returning stdout. */
  dbg(args: string[]): Promise<string>;
  stop(): Promise<void>;
}

/** The agent's flags (what worked in the verified trial); pure, so reviewable in one place. */
export function ciliumAgentArgs(o: { kubeconfig: string; libDir: string; nativeCidr: string }): string[] {
  return [
    `--k8s-kubeconfig-path=${o.kubeconfig}`,
    '--identity-allocation-mode=crd',
    '--ipam=kubernetes',
    '--k8s-require-ipv4-pod-cidr=true',
    '--routing-mode=native',
    `--ipv4-native-routing-cidr=${o.nativeCidr}`,
    '--kube-proxy-replacement=true',
    '--enable-ipv6=false',
    '--devices=eth0',
    '--enable-hubble=false',
    '--enable-l7-proxy=false',
    '--enable-endpoint-health-checking=false',
    '--enable-health-checking=false',
    `--lib-dir=${o.libDir}`,
    '--state-dir=/var/run/cilium',
    '--cgroup-root=/run/cilium/cgroupv2',
    '--bpf-root=/sys/fs/bpf',
  ];
}

/** Mounts the node's own bpffs, /run and cgroup root, then becomes the agent. Constant: values come as "$@". */
const ENTRY = [
  'set -e',
  'cg="$1"; shift',
  'mount -t bpf bpf /sys/fs/bpf',
  'mount -t tmpfs tmpfs /run',
  'mkdir -p /run/cilium/cgroupv2 /run/cnibench-cg2',
  'mount -t cgroup2 none /run/cnibench-cg2',
  'mount --bind "/run/cnibench-cg2/$cg" /run/cilium/cgroupv2',
  'umount /run/cnibench-cg2',
  // Machine-wide sysctls stay as they are: Cilium sets kernel.unprivileged_bpf_disabled=1 (sticky)
  // and kernel.timer_migration=0 and ignores a refusal (pkg/datapath/loader/base.go), as the lab does.
  'mount --bind /proc/sys/kernel /proc/sys/kernel',
  'mount -o remount,bind,ro /proc/sys/kernel',
  'exec "$@"',
].join('\n');

async function applyCrds(cp: ControlPlane): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kubeConfigFrom(cp.adminKubeconfig));
  const dir = join(CILIUM_DIR, 'crds');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.yaml'))
    .sort();
  if (!files.length) throw new Error(`cilium harness: no CRDs under ${dir}`);
  for (const f of files) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, f), 'utf8'))) {
      const o = doc.toJS() as KubernetesObject | null;
      if (!o?.kind) continue;
      await api.create(o).catch((err: unknown) => {
        if ((err as { code?: number }).code !== 409) throw err;
      });
    }
  }
}

async function setPodCidr(cp: ControlPlane, name: string, cidr: string): Promise<void> {
  const core = kubeConfigFrom(cp.adminKubeconfig).makeApiClient(CoreV1Api);
  const node = await core.readNode({ name });
  node.spec = { ...node.spec, podCIDR: cidr, podCIDRs: [cidr] };
  await core.replaceNode({ name, body: node });
  // The agent's pods namespace needs its default ServiceAccount (no controller-manager here).
  await core
    .createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'default' } } })
    .catch(() => undefined);
}

function bridgedAdminKubeconfig(cp: ControlPlane, server: string, netns: string): string {
  const config = JSON.parse(readFileSync(cp.adminKubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string } }[];
  };
  for (const c of config.clusters) c.cluster.server = server;
  const path = join(cp.dir, `cilium-${netns}.kubeconfig`);
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return path;
}

/** Kills every process in the subtree and removes it (children first). */
export async function removeCgroup(path: string): Promise<void> {
  if (!existsSync(path)) return;
  for (const d of readdirSync(path, { withFileTypes: true }))
    if (d.isDirectory()) await removeCgroup(join(path, d.name));
  if (existsSync(join(path, 'cgroup.kill'))) writeFileSync(join(path, 'cgroup.kill'), '1');
  for (let i = 0; i < 50; i++) {
    try {
      // A cgroup directory goes with rmdir (its files are the kernel's), once no process is left in it.
      rmdirSync(path);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      await sleep(100);
    }
  }
  throw new Error(`cilium harness: cannot remove cgroup ${path}`);
}

/** Removes node cgroups whose test process is gone (cnibench-cilium-<pid>-*). */
export async function removeLeftoverCgroups(): Promise<void> {
  const root = cgroup2Root();
  for (const d of readdirSync(root).filter((n) => n.startsWith(CGROUP_PREFIX))) {
    const owner = Number(d.slice(CGROUP_PREFIX.length).split('-')[0]);
    let alive = owner === process.pid;
    try {
      process.kill(owner, 0);
      alive = true;
    } catch {
      // owner gone
    }
    if (!alive) await removeCgroup(join(root, d));
  }
}

async function waitReady(agent: Component, dbg: (args: string[]) => Promise<string>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (agent.exitCode() !== undefined)
      throw new Error(`cilium-agent exited with ${agent.exitCode()}:\n${agent.tail(30)}`);
    if (agent.tail(400).includes('Daemon initialization completed')) {
      const status = await dbg(['status', '--brief']).catch(() => '');
      if (/OK/.test(status)) return;
    }
    await sleep(500);
  }
  throw new Error(`cilium-agent not ready after ${timeoutMs / 1000} s:\n${agent.tail(30)}`);
}

export async function startCiliumNode(cp: ControlPlane, opts: CiliumNodeOptions): Promise<CiliumNode> {
  const missing = ciliumMissing();
  if (missing) throw new Error(missing);
  await removeLeftoverCgroups();
  await applyCrds(cp);
  await ensureNode(cp, opts.nodeName, opts.nodeIp);
  await setPodCidr(cp, opts.nodeName, opts.podCidr);
  const netns = await createThrowawayNetns(opts.nodeIp);
  const cgName = `${CGROUP_PREFIX}${process.pid}-${netns.name.slice(-6)}`;
  const cgroup = join(cgroup2Root(), cgName);
  let bridge: ApiBridge | undefined;
  let agent: Component | undefined;
  const stop = async (): Promise<void> => {
    await agent?.stop();
    await bridge?.stop();
    await removeCgroup(cgroup);
    await netns.delete();
  };
  try {
    mkdirSync(cgroup);
    // A writable copy of the datapath sources: the agent writes features.h into them at start.
    const libDir = join(cp.dir, `cilium-lib-${netns.name}`);
    cpSync(join(CILIUM_DIR, 'bpf'), join(libDir, 'bpf'), { recursive: true });
    bridge = await startApiBridge({ dir: cp.dir, apiserver: cp.server, netns: netns.name });
    const kubeconfig = bridgedAdminKubeconfig(cp, bridge.server, netns.name);
    const binary = join(CILIUM_DIR, 'cilium-agent');
    const env = [
      'env',
      `PATH=/usr/lib/llvm-19/bin:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`,
      `K8S_NODE_NAME=${opts.nodeName}`,
    ];
    agent = startComponent(cp.dir, `cilium-agent-${netns.name}`, 'ip', [
      'netns',
      'exec',
      netns.name,
      'sh',
      '-c',
      ENTRY,
      'sh',
      cgName,
      ...env,
      binary,
      ...ciliumAgentArgs({ kubeconfig, libDir, nativeCidr: '198.18.0.0/15' }),
    ]);
    const pid = agent.pid;
    const dbg = async (args: string[]): Promise<string> =>
      (
        await run(
          'nsenter',
          [`--mount=/proc/${pid}/ns/mnt`, `--net=/proc/${pid}/ns/net`, '--', join(CILIUM_DIR, 'cilium-dbg'), ...args],
          { tool: 'cilium-dbg', timeoutMs: 30_000 },
        )
      ).stdout;
    await waitReady(agent, dbg, 180_000);
    const a = agent;
    return { netns, netnsPath: `/run/netns/${netns.name}`, pid, cgroup, tail: (n) => a.tail(n), dbg, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
