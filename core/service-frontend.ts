/**
 * How a run puts a Service in front of its servers, and how a Service scale
 * sweep adds dummy Services ahead of it. The lab programs kube-proxy rules in
 * its node namespaces; in a cluster the collector creates Services and
 * EndpointSlices. The orchestrator only sees these interfaces.
 */
import type { DataplaneSample } from '../gen/cnibench/v1/agent.js';
import type { ClusterDescription } from './cluster.js';
import type { ConditionDriver } from './conditions.js';

export interface ServiceEndpoint {
  ip: string;
  port: number;
}

/**
 * A further port of the same Service (same ClusterIP, same endpoint
 * addresses): `port` on the ClusterIP, `targetPort` on the endpoints. A tool
 * that opens a second, data connection (netperf) needs one.
 */
export interface ExtraServicePort {
  name: string;
  port: number;
  targetPort: number;
}

export interface ServiceAddress {
  ip: string;
  port: number;
}

export interface ServiceFrontend {
  /** Short description for reports, e.g. "lab kube-proxy iptables (legacy)". */
  readonly description: string;
  /** What the frontend knows of the cluster it programs (the lab knows all of it). */
  readonly cluster?: Partial<ClusterDescription>;
  /** Reads the cluster's description again (unless the last reading is younger than maxAgeMs); never throws. */
  refreshCluster?(maxAgeMs?: number): Promise<void>;
  expose(
    name: string,
    port: number,
    endpoints: ServiceEndpoint[],
    extraPorts?: readonly ExtraServicePort[],
  ): Promise<ServiceAddress>;
  remove(name: string): Promise<void>;
  /** Present when the frontend can run a Service scale sweep. */
  readonly scale?: ServiceScaler;
  /** Present when the frontend can put overhead conditions (policies, Hubble, ...) in place (core/conditions.ts). */
  conditions?: ConditionDriver;
  /**
   * Replaces a run Service's endpoints in one update, as an EndpointSlice
   * write does (a disruption phase's endpoint-removed event); absent where the
   * frontend cannot.
   */
  setEndpoints?(name: string, endpoints: ServiceEndpoint[]): Promise<void>;
  /**
   * Restarts the dataplane's agent on one node (kube-proxy, cilium-agent) as a
   * rollout would, and resolves once it runs again, with what it did (a
   * disruption phase's dataplane-restart event). Absent where there is none to
   * restart (the lab's emulated kube-proxy) or the operator has not allowed it.
   */
  restartDataplane?(nodeName: string, signal?: AbortSignal): Promise<Record<string, unknown>>;
  /**
   * Cuts a backend pod off without notice (the lab sets its veth down: what is
   * sent to it vanishes, its process and endpoint stay), resolving with what it
   * did (a disruption phase's backend-link-down event); absent where the
   * frontend cannot (a cluster collector does not take links down).
   */
  cutEndpointLink?(endpoint: ServiceEndpoint): Promise<Record<string, unknown>>;
  /** Brings back every link cutEndpointLink took down; returns what could not be restored. */
  restoreEndpointLinks?(): Promise<string[]>;
  /**
   * True where a Service reaches the dataplane some time after expose()
   * returns (a cluster's own service proxy programs it): a measurement through
   * a new Service then waits until the client's node shows it. The lab
   * programs its nodes before expose() returns.
   */
  readonly programmedLater?: boolean;
}

/**
 * What every node's dataplane must show once a step is programmed: at least
 * this many KUBE-SERVICES rules (iptables mode), service-ips map elements
 * (nftables mode) or Cilium LB frontends with all their backends (eBPF), and
 * where the Service's own address is known, that frontend with its backends.
 * The orchestrator checks it on the agents' samples.
 */
export interface SyncTarget {
  kubeServicesRules?: number;
  nftServiceIps?: number;
  ciliumFrontends?: number;
  ciliumFrontend?: { address: string; port: number; backends: string[] };
}

export interface ScaleStep {
  /** Dummy Services now present. */
  services: number;
  /** Wall time of the batch that programmed this step (all nodes). */
  programmingMs: number;
  expect: SyncTarget;
  /**
   * Set where the frontend cannot know the absolute counts (a cluster has its
   * own Services): the dummy Services above the sweep's start. The orchestrator
   * adds this to each node's own baseline sample, in the mode the node shows.
   */
  added?: number;
}

/** What the orchestrator gives a sweep's preflight: one fresh dataplane sample per node (keyed by agent), on demand. */
export interface ScalePrepareContext {
  samples(): Promise<ReadonlyMap<string, DataplaneSample | undefined>>;
  signal?: AbortSignal;
}

export interface ServiceScaler {
  /** Adds or removes dummy Services (without selector, `endpointsPerService` fake endpoints each) so that exactly `count` exist. */
  setDummyServices(count: number, endpointsPerService: number, runId?: string): Promise<ScaleStep>;
  /**
   * Before a sweep's first step: checks that its largest step fits (Cilium's LB
   * map, from the nodes' samples `context.samples` takes) and labels what
   * follows with `runId`.
   */
  prepare?(
    maxServices: number,
    endpointsPerService: number,
    runId: string,
    context?: ScalePrepareContext,
  ): Promise<void>;
  /** After the sweep: undoes what prepare changed. Never throws. */
  finish?(): Promise<void>;
}
