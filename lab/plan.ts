/**
 * The lab's topology as data: which namespaces, links, addresses and routes a
 * lab of N nodes has. Pure, so the address plan is tested without root and every
 * address is provably inside 198.18.0.0/15 (RFC 2544 benchmarking range).
 *
 *   fabric ns (bridge br0) ── veth ── node ns eth0 198.18.0.(i+1)/24
 *   node ns bridge cbr0 198.18.(16+i).1/24 ── veth ── pod ns eth0 198.18.(16+i).(10+j)/24
 *   node i routes 198.18.(16+k).0/24 via 198.18.0.(k+1) for every other node k
 *
 * No namespace has a route to anything outside 198.18.0.0/15, and nothing is
 * created in the root namespace, so lab traffic can never reach the uplink.
 */
import { CniBenchError, ErrorCodes } from '../core/errors.js';

export const LAB_PREFIX = 'cnib-';
export const MAX_NODES = 200;
/** Pod addresses of all nodes (the "cluster CIDR"). */
export const CLUSTER_CIDR = '198.18.16.0/20';
export const SERVICE_CIDR = '198.19.0.0/16';

export interface LabPod {
  ns: string;
  ip: string;
  /** Host-side veth name inside the node namespace. */
  hostIf: string;
}

export interface LabNode {
  index: number;
  /** Kubernetes-style node name the agent reports. */
  name: string;
  ns: string;
  underlayIp: string;
  podCidr: string;
  bridgeIp: string;
  pods: LabPod[];
  /** Routes to other nodes' pod CIDRs. */
  routes: { dst: string; via: string }[];
  /** The CPUs this node's processes run on (its agent, the tools that program its rules); unset: all (cpu-sets.ts). */
  cpus?: number[];
  /** Cilium dataplanes: the cgroup2 directory the node's pod processes join (its socket load balancer's scope). */
  podCgroup?: string;
}

export interface LabPlan {
  id: string;
  fabricNs: string;
  nodes: LabNode[];
}

export function labNamespacePrefix(id: string): string {
  return `${LAB_PREFIX}${id}-`;
}

/** Parses a lab namespace name back into its lab id, or undefined when it is not a lab namespace. */
export function labIdOf(nsName: string): string | undefined {
  return /^cnib-([0-9a-z]{4,16})-/.exec(nsName)?.[1];
}

export function planLab(id: string, nodeCount: number, podsPerNode = 1): LabPlan {
  if (!/^[0-9a-z]{4,16}$/.test(id))
    throw new CniBenchError(ErrorCodes.VALIDATION, `lab id: '${id}' must be 4-16 lowercase letters or digits`, {
      details: { field: 'id' },
    });
  if (!Number.isInteger(nodeCount) || nodeCount < 1 || nodeCount > MAX_NODES) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `nodes: must be an integer from 1 to ${MAX_NODES}, got ${nodeCount}`,
      { details: { field: 'nodes' } },
    );
  }
  if (!Number.isInteger(podsPerNode) || podsPerNode < 1 || podsPerNode > 200) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `podsPerNode: must be an integer from 1 to 200, got ${podsPerNode}`,
      { details: { field: 'podsPerNode' } },
    );
  }
  const p = labNamespacePrefix(id);
  const nodes: LabNode[] = [];
  for (let i = 0; i < nodeCount; i++) {
    const third = 16 + i;
    nodes.push({
      index: i,
      name: `lab-n${i}`,
      ns: `${p}n${i}`,
      underlayIp: `198.18.0.${i + 1}`,
      podCidr: `198.18.${third}.0/24`,
      bridgeIp: `198.18.${third}.1`,
      pods: Array.from({ length: podsPerNode }, (_, j) => ({
        ns: `${p}n${i}-p${j}`,
        ip: `198.18.${third}.${10 + j}`,
        hostIf: `p${j}`,
      })),
      routes: [],
    });
  }
  for (const n of nodes) n.routes = nodes.filter((o) => o !== n).map((o) => ({ dst: o.podCidr, via: o.underlayIp }));
  return { id, fabricNs: `${p}fab`, nodes };
}

/** Every IPv4 address the plan assigns, for the range check. */
export function planAddresses(plan: LabPlan): string[] {
  return plan.nodes.flatMap((n) => [
    n.underlayIp,
    n.bridgeIp,
    ...n.pods.map((p) => p.ip),
    ...n.routes.map((r) => r.via),
  ]);
}

/** True for an address in 198.18.0.0/15. */
export function inBenchmarkRange(ip: string): boolean {
  const [a, b] = ip.split('.').map(Number);
  return a === 198 && (b === 18 || b === 19);
}
