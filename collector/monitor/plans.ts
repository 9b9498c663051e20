/**
 * Which agent probes whom, as a pure function of what the collector knows:
 * monitoring agents (connected, with a pod IP), node status where the cluster
 * gives it (cordoned or not-ready nodes are never targets), the nodes a run
 * uses (paused: they neither probe nor get probed), and the probe Service.
 * In the lab there are no Kubernetes nodes; the registry's agents are the nodes.
 */
import type { MonitorCapability, MonitorPeer, MonitorPlan, ProbeService } from '../../gen/cnibench/v1/agent.js';
import { selectPeers } from './ring.js';

export interface MonitorAgentView {
  id: string;
  node: string;
  podIp: string;
  hostIp: string;
  connected: boolean;
  capability: MonitorCapability;
}

export interface NodeStatus {
  ready: boolean;
  schedulable: boolean;
}

export interface PlanInputs {
  agents: readonly MonitorAgentView[];
  /** Kubernetes node status by name; a node absent from a given map is not a target. Undefined: no cluster (the lab). */
  nodeStatus?: ReadonlyMap<string, NodeStatus>;
  pausedNodes: ReadonlySet<string>;
  /** The run that pauses `pausedNodes`. */
  runId?: string;
  service?: ProbeService;
}

export type PlanBody = Omit<MonitorPlan, 'generation'>;

/** One agent per node (the first by id), connected and monitoring. */
export function monitoringAgents(agents: readonly MonitorAgentView[]): MonitorAgentView[] {
  const seen = new Set<string>();
  return [...agents]
    .sort((a, b) => a.id.localeCompare(b.id))
    .filter((a) => a.connected && a.capability.enabled && !seen.has(a.node) && seen.add(a.node));
}

/** Agents that may be probed: with a pod IP and a responder, on a Ready, schedulable node. */
export function eligibleTargets(inputs: Pick<PlanInputs, 'agents' | 'nodeStatus'>): MonitorAgentView[] {
  return monitoringAgents(inputs.agents).filter((a) => {
    if (!a.podIp || !a.capability.probePort) return false;
    if (!inputs.nodeStatus) return true;
    const s = inputs.nodeStatus.get(a.node);
    return s?.ready === true && s.schedulable;
  });
}

export function buildPlans(inputs: PlanInputs): Map<string, PlanBody> {
  const targets = eligibleTargets(inputs);
  const byNode = new Map(targets.map((t) => [t.node, t]));
  const names = targets.map((t) => t.node);
  const running = inputs.runId !== undefined;
  const out = new Map<string, PlanBody>();
  for (const a of monitoringAgents(inputs.agents)) {
    const peers: MonitorPeer[] = selectPeers(a.node, names, a.capability.peers).map((name) => {
      const t = byNode.get(name) as MonitorAgentView;
      return {
        nodeName: name,
        podIp: t.podIp,
        probePort: t.capability.probePort,
        hostIp: t.hostIp,
        hostProbePort: t.hostIp ? t.capability.hostProbePort : 0,
        paused: inputs.pausedNodes.has(name),
      };
    });
    const paused = inputs.pausedNodes.has(a.node);
    out.set(a.id, {
      peers,
      service: inputs.service,
      paused,
      pauseReason: paused ? `run ${inputs.runId ?? ''} uses this node` : '',
      // The Service's endpoints include the run's nodes, and changing them mid-run would disturb it.
      servicePaused: running,
    });
  }
  return out;
}

/** The probe Service's endpoints: every eligible target's pod responder, in a stable order. */
export function serviceEndpoints(inputs: Pick<PlanInputs, 'agents' | 'nodeStatus'>): { ip: string; port: number }[] {
  return eligibleTargets(inputs)
    .map((t) => ({ ip: t.podIp, port: t.capability.probePort }))
    .sort((a, b) => a.ip.localeCompare(b.ip) || a.port - b.port);
}
