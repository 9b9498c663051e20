/**
 * Builds and removes the lab's namespaces and links with iproute2, through
 * core/process.ts. Link commands for a namespace go in one `ip -batch` so a lab
 * comes up in a few dozen process starts. Nothing is created in the root
 * namespace: veth pairs are made inside the fabric and node namespaces directly.
 */
import { runInNetns } from '../core/netns.js';
import { run } from '../core/process.js';
import type { LabNode, LabPlan } from './plan.js';

/** Sysctls of a client pod, so short-connection runs do not exhaust ephemeral ports. */
export const POD_SYSCTLS = ['net.ipv4.tcp_tw_reuse=1', 'net.ipv4.ip_local_port_range=1024 65535'];
const NODE_SYSCTLS = ['net.ipv4.ip_forward=1', 'net.ipv4.tcp_tw_reuse=1', 'net.ipv4.ip_local_port_range=1024 65535'];

async function ipBatch(ns: string | undefined, lines: string[]): Promise<void> {
  const args = ns ? ['-n', ns, '-batch', '-'] : ['-batch', '-'];
  await run('ip', args, { input: `${lines.join('\n')}\n`, tool: 'ip', timeoutMs: 60_000 });
}

async function sysctl(ns: string, settings: string[]): Promise<void> {
  await runInNetns({ name: ns }, 'change', 'sysctl', ['-q', '-w', ...settings]);
}

function nodeLines(node: LabNode): string[] {
  return [
    'link set lo up',
    `addr add ${node.underlayIp}/24 dev eth0`,
    'link set eth0 up',
    'link add cbr0 type bridge',
    `addr add ${node.bridgeIp}/24 dev cbr0`,
    'link set cbr0 up',
    ...node.pods.flatMap((p) => [
      `link add ${p.hostIf} type veth peer name eth0 netns ${p.ns}`,
      `link set ${p.hostIf} master cbr0`,
      `link set ${p.hostIf} up`,
    ]),
    ...node.routes.map((r) => `route add ${r.dst} via ${r.via} dev eth0`),
  ];
}

/**
 * How pods get their network: 'bridge', the lab's own (a bridge per node, a
 * veth per pod, static routes between nodes); or 'cni', where a CNI plugin
 * wires each pod later and the node has only its uplink (Cilium's dataplanes:
 * Cilium makes the pod links and the routes or tunnel between nodes).
 */
export type PodNetwork = 'bridge' | 'cni';

/** Creates every namespace and link of the plan. On error the caller tears down (names are all prefixed). */
export async function createTopology(plan: LabPlan, podNetwork: PodNetwork = 'bridge'): Promise<void> {
  const all = [plan.fabricNs, ...plan.nodes.flatMap((n) => [n.ns, ...n.pods.map((p) => p.ns)])];
  await ipBatch(
    undefined,
    all.map((ns) => `netns add ${ns}`),
  );
  await ipBatch(plan.fabricNs, [
    'link set lo up',
    'link add br0 type bridge',
    'link set br0 up',
    ...plan.nodes.flatMap((n) => [
      `link add n${n.index} type veth peer name eth0 netns ${n.ns}`,
      `link set n${n.index} master br0`,
      `link set n${n.index} up`,
    ]),
  ]);
  for (const node of plan.nodes) {
    await ipBatch(
      node.ns,
      podNetwork === 'bridge'
        ? nodeLines(node)
        : ['link set lo up', `addr add ${node.underlayIp}/24 dev eth0`, 'link set eth0 up'],
    );
    await sysctl(node.ns, NODE_SYSCTLS);
    for (const pod of node.pods) {
      await ipBatch(
        pod.ns,
        podNetwork === 'bridge'
          ? [
              'link set lo up',
              `addr add ${pod.ip}/24 dev eth0`,
              'link set eth0 up',
              `route add default via ${node.bridgeIp} dev eth0`,
            ]
          : ['link set lo up'],
      );
      await sysctl(pod.ns, POD_SYSCTLS);
    }
  }
}

/** Names of all network namespaces on the machine. */
export async function listNamespaces(): Promise<string[]> {
  const r = await run('ip', ['netns', 'list'], { tool: 'ip', timeoutMs: 10_000 });
  return r.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter(Boolean);
}

/** PIDs of processes inside a namespace. */
export async function namespacePids(ns: string): Promise<number[]> {
  const r = await run('ip', ['netns', 'pids', ns], { tool: 'ip', timeoutMs: 10_000, okExitCodes: [0, 1] });
  return r.stdout
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

/** Kills whatever still runs in the namespaces, then deletes them. Never throws for a namespace already gone. */
export async function deleteNamespaces(names: string[]): Promise<void> {
  for (const ns of names) {
    for (const pid of await namespacePids(ns).catch(() => [])) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }
  if (names.length)
    await ipBatch(
      undefined,
      names.map((ns) => `netns delete ${ns}`),
    ).catch(async () => {
      for (const ns of names)
        await run('ip', ['netns', 'delete', ns], { tool: 'ip', okExitCodes: [0, 1] }).catch(() => undefined);
    });
}

/**
 * Limits every node's uplink (egress of its eth0) to `mbit` with a token
 * bucket, so the lab has a link rate like a real NIC (veth has none) and the
 * link-rate guard can be provoked.
 */
export async function shapeUplinks(plan: LabPlan, mbit: number): Promise<void> {
  if (!Number.isFinite(mbit) || mbit <= 0) throw new Error(`linkMbit: must be a positive number, got ${mbit}`);
  for (const node of plan.nodes) {
    await runInNetns({ name: node.ns }, 'change', 'tc', [
      'qdisc',
      'replace',
      'dev',
      'eth0',
      'root',
      'tbf',
      'rate',
      `${mbit}mbit`,
      'burst',
      '256kb',
      'latency',
      '20ms',
    ]);
  }
}
