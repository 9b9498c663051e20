/**
 * The cluster's description from what the API server returned: GET /version,
 * the Node list (CNI annotations, node.status.nodeInfo, instance-type labels),
 * kube-system/kube-proxy and cilium-config. Pure, so every rule is tested on
 * fixtures; cluster-describer.ts does the reading. Values that differ across
 * nodes are listed, never picked; what could not be read is a note naming the
 * object and the grant, never a guess.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { ClusterDescription } from '../../core/cluster.js';
import { isCniBenchError } from '../../core/errors.js';
import { ciliumModeOf } from './cilium-mode.js';
import { cniFromNodes } from './cni-annotations.js';
import { KUBE_PROXY_CONFIGMAP, kubeProxyModeOf } from './kube-proxy-mode.js';
import { listValues } from './node-values.js';

/** What reading one ConfigMap gave: its data, a 404, a 403 (with the grant that is missing), or another failure. */
export type ConfigMapRead =
  | { state: 'found'; data: Record<string, string> }
  | { state: 'not-found' }
  | { state: 'forbidden'; grant: string }
  | { state: 'failed'; message: string };

export interface ApiObservations {
  /** gitVersion from GET /version; undefined when that call failed. */
  version?: string;
  nodes: readonly V1Node[];
  kubeProxy: ConfigMapRead;
  ciliumConfig: ConfigMapRead;
  /** Where cilium-config was looked for. */
  ciliumNamespace: string;
}

/** The description (partial: the run adds what the agents see), with notes and evidence inside it. */
export type ClusterDetection = Partial<ClusterDescription> & { notes: string[]; evidence: string[] };

/** Pure: kernel, OS image, container runtime and node type across all nodes (mixed values listed). */
export function nodeFacts(nodes: readonly V1Node[]): Partial<ClusterDescription> {
  const info = nodes.map((n) => n.status?.nodeInfo);
  const types = nodes.map(
    (n) =>
      n.metadata?.labels?.['node.kubernetes.io/instance-type'] ??
      n.metadata?.labels?.['beta.kubernetes.io/instance-type'] ??
      '',
  );
  const facts: Partial<ClusterDescription> = {
    kernel: listValues(info.map((i) => i?.kernelVersion ?? '')),
    osImage: listValues(info.map((i) => i?.osImage ?? '')),
    containerRuntime: listValues(info.map((i) => i?.containerRuntimeVersion ?? '')),
    nodeType: listValues(types),
  };
  return Object.fromEntries(Object.entries(facts).filter(([, v]) => v)) as Partial<ClusterDescription>;
}

function unreadable(what: string, read: ConfigMapRead): string | undefined {
  if (read.state === 'forbidden') return `${what} not read: the collector may not get it (grant ${read.grant})`;
  if (read.state === 'failed') return `${what} not read: ${read.message}`;
  return undefined;
}

/** kube-proxy's mode from its ConfigMap: the mode, or nothing with a note or evidence saying why. */
function kubeProxy(read: ConfigMapRead, out: ClusterDetection): string | undefined {
  const what = `configmap ${KUBE_PROXY_CONFIGMAP.namespace}/${KUBE_PROXY_CONFIGMAP.name}`;
  if (read.state === 'not-found') {
    out.evidence.push(`${what}: not found (kube-proxy not installed by kubeadm, or not running)`);
    return undefined;
  }
  if (read.state !== 'found') {
    out.notes.push(unreadable(what, read)!);
    return undefined;
  }
  try {
    const m = kubeProxyModeOf(read.data);
    out.evidence.push(m.evidence);
    return m.mode;
  } catch (err) {
    if (!isCniBenchError(err)) throw err;
    out.notes.push(`kube-proxy mode unknown: ${err.code} ${err.message}`);
    return undefined;
  }
}

/** Cilium from cilium-config (preferred: Cilium may not annotate nodes), else the CNI the node annotations show. */
function cni(obs: ApiObservations, out: ClusterDetection): { replacesKubeProxy: boolean } {
  const fromNodes = cniFromNodes(obs.nodes);
  out.evidence.push(...fromNodes.evidence);
  out.notes.push(...fromNodes.notes);
  const where = `${obs.ciliumNamespace}/cilium-config`;
  const unread = unreadable(`configmap ${where}`, obs.ciliumConfig);
  if (unread) out.notes.push(unread);
  if (obs.ciliumConfig.state !== 'found') {
    if (fromNodes.cni) out.cni = fromNodes.cni;
    if (fromNodes.cniMode) out.cniMode = fromNodes.cniMode;
    return { replacesKubeProxy: false };
  }
  const cilium = ciliumModeOf(obs.ciliumConfig.data, where);
  out.evidence.push(...cilium.evidence);
  out.notes.push(...cilium.notes);
  const others = Object.keys(fromNodes.modes).filter((c) => c !== 'cilium');
  if (others.length)
    out.notes.push(
      `${where} exists, and nodes carry ${others.join(', ')} annotations too: Cilium chained with another CNI, or a migration`,
    );
  out.cni = others.length ? ['cilium', ...others].join(' + ') : 'cilium';
  out.cniMode = cilium.cniMode;
  return { replacesKubeProxy: cilium.replacesKubeProxy };
}

/**
 * Pure: the cluster description the API supports. kube-proxy's mode is
 * "none (Cilium kube-proxy replacement)" when cilium-config says so; a
 * kube-proxy ConfigMap beside it is a note (it may be a leftover, or kube-proxy
 * may still run: the agents' rules tell, see runs/cluster-description.ts).
 */
export function detectCluster(obs: ApiObservations): ClusterDetection {
  const out: ClusterDetection = { notes: [], evidence: [] };
  if (obs.version) out.kubernetesVersion = obs.version;
  else out.notes.push('Kubernetes version not read (GET /version failed)');
  Object.assign(out, nodeFacts(obs.nodes));
  if (obs.nodes.length)
    out.evidence.push(
      `node.status.nodeInfo and instance-type labels of ${obs.nodes.length} node${obs.nodes.length === 1 ? '' : 's'}`,
    );
  const { replacesKubeProxy } = cni(obs, out);
  const proxy = kubeProxy(obs.kubeProxy, out);
  if (replacesKubeProxy) {
    out.kubeProxyMode = 'none (Cilium kube-proxy replacement)';
    if (proxy)
      out.notes.push(
        `cilium-config replaces kube-proxy, yet configmap kube-system/kube-proxy sets mode ${proxy}: a leftover, or kube-proxy still programs Services`,
      );
  } else if (proxy) {
    out.kubeProxyMode = proxy;
  }
  return out;
}
