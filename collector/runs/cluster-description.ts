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

export function describeCluster(
  plan: Pick<RunPlan, 'server' | 'client'>,
  frontend?: Partial<ClusterDescription>,
): ClusterDescription {
  const a = plan.server;
  const label = (k: keyof typeof DESCRIPTION_LABELS): string | undefined =>
    a.info.labels[DESCRIPTION_LABELS[k]] || plan.client.info.labels[DESCRIPTION_LABELS[k]];
  const kernels = [...new Set([plan.server.info.kernel, plan.client.info.kernel])].filter(Boolean);
  const cpus = a.info.cpus ? `${a.info.cpus} CPUs` : 'unknown';
  const proxy = reconcileProxyMode(frontend?.kubeProxyMode, [detectedProxyMode(a), detectedProxyMode(plan.client)]);
  const labelledProxy = label('kubeProxyMode');
  const notes = [...(frontend?.notes ?? []), ...(proxy.note && !labelledProxy ? [proxy.note] : [])];
  return {
    kubernetesVersion: label('kubernetesVersion') ?? frontend?.kubernetesVersion ?? 'unknown',
    cni: label('cni') ?? frontend?.cni ?? 'unknown',
    cniMode: label('cniMode') ?? frontend?.cniMode ?? '',
    kubeProxyMode: labelledProxy ?? proxy.mode,
    kernel: kernels.join(' / ') || frontend?.kernel || 'unknown',
    nodeType: label('nodeType') ?? frontend?.nodeType ?? cpus,
    ...(frontend?.osImage ? { osImage: frontend.osImage } : {}),
    ...(frontend?.containerRuntime ? { containerRuntime: frontend.containerRuntime } : {}),
    ...(notes.length ? { notes } : {}),
    ...(frontend?.evidence?.length ? { evidence: frontend.evidence } : {}),
  };
}
