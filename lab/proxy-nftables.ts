/**
 * The lab's kube-proxy in nftables mode: Services in kube-proxy's nftables
 * layout (table ip kube-proxy, service-ips verdict map) in every node
 * namespace with `nft -f`.
 */
import { run } from '../core/process.js';
import { renderNftBase, renderNftServicesAdd, renderNftServicesDelete } from './kube-proxy-nftables.js';
import { CLUSTER_CIDR, SERVICE_CIDR, type LabNode, type LabPlan } from './plan.js';
import { LabProxyBase, type LabRules } from './proxy-base.js';

const NFT_TIMEOUT_MS = 15 * 60_000;
/**
 * Services per nft transaction when a sweep step adds or removes many. nft 1.0.6
 * with kube-proxy's anonymous `numgen ... vmap` sets makes one transaction's
 * cost grow faster than quadratically (measured here: 5,000 Services 11 s,
 * 10,000 Services 103 s in one batch; 22 s in batches of 1,000). Each batch is
 * still one atomic transaction.
 */
export const NFT_BATCH_SERVICES = 1000;

function nftRules(plan: LabPlan): LabRules {
  // One node after the other: a large nft transaction is kernel CPU (rule
  // validation), and two at once on a 2-core machine starved the agents and the
  // collector for seconds. Programming time is therefore the sum over nodes.
  const apply = async (text: string | ((node: LabNode) => string)): Promise<void> => {
    for (const node of plan.nodes) {
      await run('ip', ['netns', 'exec', node.ns, 'nft', '-f', '-'], { input: typeof text === 'string' ? text : text(node), tool: 'nft', timeoutMs: NFT_TIMEOUT_MS });
    }
  };
  return {
    batchServices: NFT_BATCH_SERVICES,
    init: () => apply((node) => renderNftBase({ serviceCidr: SERVICE_CIDR, nodeIp: node.underlayIp })),
    add: (services) => apply(renderNftServicesAdd(services, CLUSTER_CIDR)),
    delete: (services) => apply(renderNftServicesDelete(services)),
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
