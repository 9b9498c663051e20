/**
 * What a run says about the cluster it measured. The collector's Kubernetes
 * side and the lab both fill it in and the report prints it, so it sits below
 * all three.
 */
/** Cluster description a run carries, detected by the collector and its agents. */
export interface ClusterDescription {
  /** e.g. "lab" or "v1.34.2". */
  kubernetesVersion: string;
  /** e.g. "lab bridge", "cilium 1.19", "calico", "flannel", "unknown". */
  cni: string;
  /** e.g. "native routing", "vxlan", "" when unknown. */
  cniMode: string;
  /** "iptables", "nftables", "ipvs", "none (eBPF)", "unknown". */
  kubeProxyMode: string;
  kernel: string;
  /** Node type/instance size when known; CPU count otherwise. */
  nodeType: string;
  /** The nodes' OS image (node.status.nodeInfo), when the API was read; mixed values are listed. */
  osImage?: string;
  /** The nodes' container runtime and version (node.status.nodeInfo), when the API was read. */
  containerRuntime?: string;
  /** The run's nodes' hardware from the agents' node facts (report/node-facts.ts), when they reported them. */
  hardware?: string;
  /**
   * What could not be read, or what disagrees (e.g. the kube-proxy ConfigMap says
   * nftables and the agents' rules say iptables): shown with the description so
   * a reader never takes a guess for a measurement.
   */
  notes?: string[];
  /** Where each detected value came from (a ConfigMap key, a node annotation on N nodes). */
  evidence?: string[];
}
