/**
 * The numbers a report row carries, in the one shape that the report, the
 * comparison and the exporters share. A metric keeps every round's value, so
 * dispersion and significance are computed from raw data, and latency
 * percentiles come from histograms merged over all rounds (never averaged).
 */
import type { Guard } from './guards.js';
import type { Summary } from './stats.js';

export type MetricName = 'throughput' | 'rps' | 'tps' | 'loss' | 'jitter' | 'p50' | 'p90' | 'p99' | 'p99.9';

export interface Metric {
  name: MetricName;
  unit: string;
  higherIsBetter: boolean;
  /**
   * The headline value: the median of the rounds for rates; for percentiles,
   * the percentile of the histogram merged over all rounds (or the median of
   * per-round values when the tool gives no histogram, said in `source`).
   */
  value: number;
  /** One value per measured round, in round order (per-round percentiles for latency metrics). */
  perRound: number[];
  /** Dispersion of perRound; null without rounds. */
  summary: Summary | null;
  source: 'rounds-median' | 'merged-histogram' | 'per-round-median';
}

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
  /**
   * What could not be read, or what disagrees (e.g. the kube-proxy ConfigMap says
   * nftables and the agents' rules say iptables): shown with the description so
   * a reader never takes a guess for a measurement.
   */
  notes?: string[];
  /** Where each detected value came from (a ConfigMap key, a node annotation on N nodes). */
  evidence?: string[];
}

export type { Guard };
