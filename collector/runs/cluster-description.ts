/**
 * The one-line description of the cluster a run measured, so a comparison can
 * say what differs between its columns. Pure: built from what the agents
 * registered (kernel, dataplane detection, labels) and what the service
 * frontend knows of itself. Labels set by the operator (Helm values) win over
 * detection; what is neither detected nor labelled is "unknown", never guessed.
 */
import type { AgentEntry } from '../agents/registry.js';
import type { ClusterDescription } from '../report/metrics-model.js';
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

export function describeCluster(plan: Pick<RunPlan, 'server' | 'client'>, frontend?: Partial<ClusterDescription>): ClusterDescription {
  const a = plan.server;
  const label = (k: keyof typeof DESCRIPTION_LABELS): string | undefined => a.info.labels[DESCRIPTION_LABELS[k]] || plan.client.info.labels[DESCRIPTION_LABELS[k]];
  const kernels = [...new Set([plan.server.info.kernel, plan.client.info.kernel])].filter(Boolean);
  const cpus = a.info.cpus ? `${a.info.cpus} CPUs` : 'unknown';
  return {
    kubernetesVersion: label('kubernetesVersion') ?? frontend?.kubernetesVersion ?? 'unknown',
    cni: label('cni') ?? frontend?.cni ?? 'unknown',
    cniMode: label('cniMode') ?? frontend?.cniMode ?? '',
    kubeProxyMode: label('kubeProxyMode') ?? frontend?.kubeProxyMode ?? detectedProxyMode(a),
    kernel: kernels.join(' / ') || 'unknown',
    nodeType: label('nodeType') ?? frontend?.nodeType ?? cpus,
  };
}
