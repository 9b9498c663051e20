/**
 * The one-line description of the cluster a run measured, so a comparison can
 * say what differs between its columns. Pure: built from what the agents
 * registered (kernel, dataplane detection, labels) and what the service
 * frontend knows of the cluster (in Kubernetes: what the API server says, see
 * kubernetes/cluster-detect.ts). Labels set by the operator (Helm values) win
 * over detection; what is neither detected nor labelled is "unknown", never
 * guessed; where the API and the agents' rules disagree on kube-proxy's mode,
 * the description says both.
 */

import type { ClusterDescription } from '../../core/cluster.js';
import { describeHardware } from '../../report/node-facts.js';
import type { AgentEntry } from '../agents/registry.js';
import type { RunPlan } from './plan.js';

export const DESCRIPTION_LABELS = {
  kubernetesVersion: 'cni-bench.io/kubernetes-version',
  cni: 'cni-bench.io/cni',
  cniMode: 'cni-bench.io/cni-mode',
  kubeProxyMode: 'cni-bench.io/kube-proxy-mode',
  nodeType: 'cni-bench.io/node-type',
} as const;

function detectedProxyMode(a: AgentEntry): string {
  const d = a.info.dataplane;
  if (!d) return 'unknown';
  if (d.kubeProxyNftables) return 'nftables';
  if (d.kubeServices) return 'iptables';
  if (d.bpfMapCount > 0) return 'none (eBPF service handling?)';
  return 'unknown';
}

/** The mode's first word: "iptables (legacy)" and "iptables" agree; IPVS mode writes KUBE-SERVICES chains too, so an agent sees it as iptables. */
function family(mode: string): string {
  const first = mode.split(/[\s(]/)[0]!.toLowerCase();
  return first === 'ipvs' ? 'iptables' : first;
}

/**
 * Pure: kube-proxy's mode from what the frontend knows (the API) and what the
 * server and client agents see in their rules. Agreeing (or agents that see
 * nothing): the frontend's. Disagreeing: both, and a note.
 */
export function reconcileProxyMode(
  known: string | undefined,
  agents: readonly string[],
): { mode: string; note?: string } {
  const seen = [...new Set(agents.filter((m) => m !== 'unknown'))];
  if (!known) return { mode: agents[0] ?? 'unknown' };
  const other = seen.filter((m) => family(m) !== family(known));
  if (!other.length) return { mode: known };
  return {
    mode: `${known} (API) / ${other.join(', ')} (agents' rules)`,
    note: `kube-proxy mode disagrees: the cluster's configuration says ${known}, the agents' dataplane shows ${other.join(', ')}`,
  };
}

/**
 * Pure: the CNI with the Cilium version the agents' nodes report (each node's
 * cilium-agent through its API socket, at registration). Cilium named by the
 * API (cilium-config) or by the agents becomes "cilium <version>"; versions
 * that differ between nodes are all listed, with a note (an upgrade in flight);
 * the agents' own view of kube-proxy replacement and routing is evidence, and a
 * note where it disagrees with cilium-config.
 */
export function ciliumFromAgents(
  agents: readonly AgentEntry[],
  known: Partial<ClusterDescription> | undefined,
): { cni?: string; notes: string[]; evidence: string[] } {
  const notes: string[] = [];
  const evidence: string[] = [];
  // One line per node: a node's second agent (the peer) sees the same cilium-agent.
  const node = (a: AgentEntry): string => a.info.nodeName || a.id;
  const unique = [...new Map([...agents].reverse().map((a) => [node(a), a])).values()].reverse();
  const seen = unique.filter((a) => a.info.dataplane?.cilium?.version);
  const knownCni = known?.cni ?? '';
  if (!seen.length) {
    if (/\bcilium\b/.test(knownCni))
      notes.push(
        `Cilium version not read: no agent reached its node's cilium-agent API (${unique.map(node).join(', ')})`,
      );
    return { notes, evidence };
  }
  const versions = [...new Set(seen.map((a) => a.info.dataplane!.cilium!.version))];
  for (const a of seen) {
    const c = a.info.dataplane!.cilium!;
    evidence.push(
      `${node(a)}: cilium-agent (pid ${c.agentPid}) GET /v1/debuginfo on ${c.socket}: cilium-version "${c.versionFull}", kube-proxy-replacement ${c.kubeProxyReplacement || '?'}, routing ${c.routing || '?'}${c.tunnelProtocol && c.routing !== 'Native' ? ` (${c.tunnelProtocol})` : ''}`,
    );
    const kpr = c.kubeProxyReplacement.toLowerCase();
    if (known?.kubeProxyMode?.startsWith('none (Cilium') && kpr && kpr !== 'true')
      notes.push(
        `${node(a)}: cilium-config replaces kube-proxy, yet its cilium-agent reports kube-proxy-replacement ${c.kubeProxyReplacement}`,
      );
    const routing = c.routing.toLowerCase();
    if (known?.cniMode && routing && !known.cniMode.toLowerCase().includes(routing === 'native' ? 'native' : 'tunnel'))
      notes.push(`${node(a)}: cilium-config says ${known.cniMode}, its cilium-agent reports routing ${c.routing}`);
  }
  if (versions.length > 1) notes.push(`cilium-agent versions differ between nodes: ${versions.join(', ')}`);
  const named = `cilium ${versions.join(' / ')}`;
  const cni = /\bcilium\b/.test(knownCni) ? knownCni.replace(/\bcilium\b/, named) : named;
  return { cni, notes, evidence };
}

export function describeCluster(
  plan: Pick<RunPlan, 'server' | 'client'> & Partial<Pick<RunPlan, 'peer'>>,
  frontend?: Partial<ClusterDescription>,
): ClusterDescription {
  const a = plan.server;
  const label = (k: keyof typeof DESCRIPTION_LABELS): string | undefined =>
    a.info.labels[DESCRIPTION_LABELS[k]] || plan.client.info.labels[DESCRIPTION_LABELS[k]];
  const kernels = [...new Set([plan.server.info.kernel, plan.client.info.kernel])].filter(Boolean);
  const cpus = a.info.cpus ? `${a.info.cpus} CPUs` : 'unknown';
  const proxy = reconcileProxyMode(frontend?.kubeProxyMode, [detectedProxyMode(a), detectedProxyMode(plan.client)]);
  const labelledProxy = label('kubeProxyMode');
  const cilium = ciliumFromAgents(plan.peer ? [a, plan.client, plan.peer] : [a, plan.client], frontend);
  const notes = [...(frontend?.notes ?? []), ...(proxy.note && !labelledProxy ? [proxy.note] : []), ...cilium.notes];
  const evidence = [...(frontend?.evidence ?? []), ...cilium.evidence];
  const hardware = describeHardware(
    [...new Map([a, plan.client].map((x) => [x.info.nodeName, x.info.nodeFacts])).entries()].map(([name, facts]) => ({
      name,
      facts,
    })),
  );
  return {
    kubernetesVersion: label('kubernetesVersion') ?? frontend?.kubernetesVersion ?? 'unknown',
    cni: label('cni') ?? cilium.cni ?? frontend?.cni ?? 'unknown',
    cniMode: label('cniMode') ?? frontend?.cniMode ?? '',
    kubeProxyMode: labelledProxy ?? proxy.mode,
    kernel: kernels.join(' / ') || frontend?.kernel || 'unknown',
    nodeType: label('nodeType') ?? frontend?.nodeType ?? cpus,
    ...(frontend?.osImage ? { osImage: frontend.osImage } : {}),
    ...(frontend?.containerRuntime ? { containerRuntime: frontend.containerRuntime } : {}),
    ...(hardware ? { hardware } : {}),
    ...(notes.length ? { notes } : {}),
    ...(evidence.length ? { evidence } : {}),
  };
}
