/**
 * The lab's kube-proxy in nftables mode: Services in kube-proxy's nftables
 * layout (table ip kube-proxy, service-ips verdict map) in every node
 * namespace with `nft -f`.
 */
import { runInNetns } from '../core/netns.js';
import { onNodeCpus } from './cpu-sets.js';
import { renderNftBase, renderNftServicesAdd, renderNftServicesDelete } from './kube-proxy-nftables.js';
import { type LabNode, type LabPlan, SERVICE_CIDR } from './plan.js';
import { LabProxyBase, type LabRules } from './proxy-base.js';

/**
 * Services per nft transaction when a sweep step adds or removes many. nft 1.0.6
 * with kube-proxy's anonymous maps (one `numgen random mod N map { ... }` per
 * multi-endpoint Service) makes one transaction's cost grow faster than
 * linearly. Measured here with 4 endpoints each, v1.37 layout: 5,000 Services
 * 4.4 s and 10,000 Services 29.6 s in one transaction, 16.2 s in transactions
 * of 1,000 (the earlier v1.34 layout, with anonymous vmaps to per-endpoint
 * chains: 11 s, 103 s and 22 s). Each batch is still one atomic transaction.
 */
export const NFT_BATCH_SERVICES = 1000;

function nftRules(plan: LabPlan): LabRules {
  const applyOne = async (node: LabNode, text: string | ((node: LabNode) => string)): Promise<void> => {
    await runInNetns({ name: node.ns }, 'load', ...onNodeCpus(node.cpus, 'nft', ['-f', '-']), {
      input: typeof text === 'string' ? text : text(node),
      tool: 'nft',
    });
  };
  // A large nft transaction is kernel CPU (rule validation). Nodes with their
  // own CPUs program at once, each on its own, as each node's kube-proxy would;
  // nodes sharing the CPUs go one after the other, because two at once on a
  // 2-core machine starved the agents and the collector for seconds (the
  // programming time is then the sum over nodes).
  const apply = async (text: string | ((node: LabNode) => string)): Promise<void> => {
    if (plan.nodes.every((n) => n.cpus?.length)) {
      await Promise.all(plan.nodes.map((node) => applyOne(node, text)));
      return;
    }
    for (const node of plan.nodes) await applyOne(node, text);
  };
  return {
    batchServices: NFT_BATCH_SERVICES,
    init: () => apply((node) => renderNftBase({ serviceCidr: SERVICE_CIDR, nodeIp: node.underlayIp })),
    add: (services) => apply(renderNftServicesAdd(services)),
    delete: (services) => apply(renderNftServicesDelete(services)),
    // One `nft -f` input is one transaction: the old Service out and the new one in, atomically.
    replaceEndpoints: (before, after) => apply(renderNftServicesDelete(before) + renderNftServicesAdd(after)),
    expect: (total) => ({ nftServiceIps: total }),
  };
}

export class LabNftablesProxy extends LabProxyBase {
  readonly mode = 'nftables' as const;
  readonly description = 'lab kube-proxy nftables';
  protected readonly proxyMode = 'nftables';

  constructor(plan: LabPlan) {
    super(nftRules(plan));
  }
}
