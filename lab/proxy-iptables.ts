/**
 * The lab's kube-proxy in iptables mode: Services in kube-proxy's iptables
 * layout in every node namespace, with the iptables backend chosen for the lab
 * (legacy or nft). A sweep step's dummy Services go in one iptables-restore
 * batch per node, ahead of the run's own Services in KUBE-SERVICES.
 */
import { runInNetns } from '../core/netns.js';
import { onNodeCpus } from './cpu-sets.js';
import type { LabService } from './kube-proxy-iptables.js';
import { renderBase, renderEndpointsChange, renderServicesAdd, renderServicesDelete } from './kube-proxy-iptables.js';
import { CLUSTER_CIDR, type LabPlan } from './plan.js';
import { LabProxyBase, type LabRules } from './proxy-base.js';

export type IptablesBackend = 'legacy' | 'nft';

function iptablesRules(plan: LabPlan, backend: IptablesBackend): LabRules {
  const tool = `iptables-${backend}-restore`;
  // Every node in parallel (on its own CPUs when it has them), as kube-proxy runs on each node.
  const restore = async (text: string): Promise<void> => {
    await Promise.all(
      plan.nodes.map((node) => {
        // The 'load' preset's 15 minutes are generous: iptables-nft needs about a minute for 5,000 Services in kube-proxy's layout.
        return runInNetns({ name: node.ns }, 'load', ...onNodeCpus(node.cpus, tool, ['--noflush']), {
          input: text,
          tool,
        });
      }),
    );
  };
  return {
    batchServices: Infinity,
    init: () => restore(renderBase()),
    add: (services) => restore(renderServicesAdd(services, CLUSTER_CIDR)),
    delete: (services) => restore(renderServicesDelete(services)),
    replaceEndpoints: async (before, after) => {
      for (const [i, b] of before.entries())
        await restore(renderEndpointsChange(b, after[i] as LabService, CLUSTER_CIDR));
    },
    // One KUBE-SERVICES rule per Service port plus kube-proxy's trailing nodeports rule.
    expect: (total) => ({ kubeServicesRules: total + 1 }),
  };
}

export class LabIptablesProxy extends LabProxyBase {
  readonly mode = 'iptables' as const;
  readonly description: string;
  protected readonly proxyMode: string;

  constructor(
    plan: LabPlan,
    readonly backend: IptablesBackend,
  ) {
    super(iptablesRules(plan, backend));
    this.description = `lab kube-proxy iptables (${backend})`;
    this.proxyMode = `iptables (${backend})`;
  }
}
