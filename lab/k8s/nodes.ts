/**
 * The lab's Node objects in its own apiserver, as a kubelet and the node
 * lifecycle controller would leave them: the node's address on the lab fabric,
 * Ready, the machine's kernel and OS, no lifecycle taints; then the pod CIDR
 * kube-controller-manager's node-IPAM controller gives each. The Cilium lab
 * (lab/cilium/dataplane.ts) and the kube-proxy lab (lab/proxy-kube-proxy.ts)
 * register their nodes this way.
 */
import { readFileSync } from 'node:fs';
import { arch, release } from 'node:os';
import type { CoreV1Api } from '@kubernetes/client-node';
import { nodeObject, nodeStatus, osImageFrom, withoutLifecycleTaints } from '../cilium/objects.js';
import { waitFor } from '../cilium/wait.js';
import type { LabPlan } from '../plan.js';

/**
 * Creates every lab node's Node object with its status and lifts the lifecycle
 * taints; with `podCidrTimeoutMs`, also waits for each node's pod CIDR and
 * records it in the plan (the Cilium lab's IPAM; the bridge lab keeps its own).
 */
export async function registerLabNodes(core: CoreV1Api, plan: LabPlan, podCidrTimeoutMs?: number): Promise<void> {
  let osRelease = '';
  try {
    osRelease = readFileSync('/etc/os-release', 'utf8');
  } catch {
    // "Linux" then
  }
  const facts = {
    kernel: release(),
    osImage: osImageFrom(osRelease),
    architecture: arch() === 'x64' ? 'amd64' : arch(),
  };
  for (const n of plan.nodes) {
    await core.createNode({ body: nodeObject(n.name, plan.id) });
    // kube-controller-manager writes spec.podCIDR meanwhile: read, write, again on a conflict.
    await waitFor(
      `${n.name}'s status written`,
      async () => {
        const node = await core.readNode({ name: n.name });
        await core.replaceNodeStatus({
          name: n.name,
          body: { ...node, status: nodeStatus(n.name, n.underlayIp, facts) },
        });
        return true;
      },
      30_000,
      100,
    );
    // Ready now: lift the not-ready taint admission put on the new Node, as the node lifecycle controller would,
    // so a collector in Kubernetes mode sees a schedulable worker (it places load only on those).
    await waitFor(
      `${n.name}'s lifecycle taints lifted`,
      async () => {
        const node = await core.readNode({ name: n.name });
        const taints = withoutLifecycleTaints(node.spec?.taints);
        if ((taints?.length ?? 0) === (node.spec?.taints?.length ?? 0)) return true;
        await core.replaceNode({ name: n.name, body: { ...node, spec: { ...node.spec, taints } } });
        return true;
      },
      30_000,
      100,
    );
  }
  if (podCidrTimeoutMs === undefined) return;
  for (const n of plan.nodes) {
    n.podCidr = await waitFor(
      `kube-controller-manager to give ${n.name} a pod CIDR`,
      async () => (await core.readNode({ name: n.name })).spec?.podCIDR,
      podCidrTimeoutMs,
    );
  }
}
