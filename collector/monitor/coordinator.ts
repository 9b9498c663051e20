/**
 * The collector's side of continuous monitoring: it plans who probes whom
 * (plans.ts) whenever agents come, go, or a run starts or ends, sends each
 * monitoring agent its plan, keeps the probe Service current between runs,
 * holds each agent's recent reports, and answers with the aggregated view
 * (aggregate.ts) for REST, gRPC and the cluster-level metrics.
 */
import type { Logger } from '../../core/log.js';
import type { ServiceFrontend } from '../../core/service-frontend.js';
import type { MonitorPlan, MonitorReport } from '../../gen/cnibench/v1/agent.js';
import type { MonitorSnapshot } from '../../gen/cnibench/v1/monitor.js';
import type { AgentEntry, AgentRegistry } from '../agents/registry.js';
import { type AgentMonitorState, buildSnapshot, type ReceivedReport } from './aggregate.js';
import { buildPlans, type MonitorAgentView, monitoringAgents, type NodeStatus, serviceEndpoints } from './plans.js';
import { ProbeServiceManager } from './probe-service.js';
import { nodesOfRun } from './run-nodes.js';

export interface MonitorCoordinatorOptions {
  /** Reports kept per agent for the matrix's latency window. */
  windowReports?: number;
  /** How often the active run is checked (probes pause and resume within this). */
  pollMs?: number;
  /** Put a probe Service in front of the agents' responders (needs a service frontend). */
  probeService?: boolean;
  /** Kubernetes node status, where the collector has a cluster; cordoned and not-ready nodes are not probed. */
  nodeStatus?: () => ReadonlyMap<string, NodeStatus> | undefined;
}

export interface MonitorCoordinatorDeps {
  registry: AgentRegistry;
  /** The run executing now, with its stored cluster description (server, client, peer agents). */
  activeRun: () => { id: string; cluster: unknown } | undefined;
  services?: ServiceFrontend;
  log: Logger;
}

const DISABLED = { enabled: false, probePort: 0, hostProbePort: 0, peers: 0, intervalMs: 0 };

function viewOf(a: AgentEntry): MonitorAgentView {
  return {
    id: a.id,
    node: a.info.nodeName,
    podIp: a.info.podIp,
    hostIp: a.info.hostIp,
    connected: a.connected && !a.lost,
    capability: a.info.monitor ?? DISABLED,
  };
}

export class MonitorCoordinator {
  private readonly plans = new Map<string, { key: string; plan: MonitorPlan }>();
  private readonly reports = new Map<string, ReceivedReport[]>();
  private readonly service: ProbeServiceManager;
  private readonly window: number;
  private generation = 0;
  private runId: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pending: NodeJS.Timeout | undefined;
  private planning: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: MonitorCoordinatorDeps,
    private readonly opts: MonitorCoordinatorOptions = {},
  ) {
    this.window = opts.windowReports ?? 10;
    this.service = new ProbeServiceManager(opts.probeService === false ? undefined : deps.services, deps.log);
  }

  start(): void {
    const { registry } = this.deps;
    for (const ev of ['registered', 'detached', 'lost'] as const) registry.on(ev, () => this.schedule());
    // A (re)connected agent may have restarted without a plan: resend its own.
    registry.on('attached', (id) => {
      this.plans.delete(id);
      this.schedule();
    });
    this.timer = setInterval(() => {
      if (this.deps.activeRun()?.id !== this.runId) this.schedule(0);
    }, this.opts.pollMs ?? 250);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.pending);
    await this.planning;
    await this.service.close();
  }

  /** Node status changed (a node cordoned, uncordoned, NotReady or Ready again): plan again. */
  nodesChanged(): void {
    this.schedule();
  }

  onReport(agentId: string, report: MonitorReport, nowMs = Date.now()): void {
    const list = this.reports.get(agentId) ?? [];
    if (list.length && (list.at(-1)?.report.timeMs ?? 0) > report.timeMs) return;
    list.push({ report, receivedMs: nowMs });
    if (list.length > this.window) list.splice(0, list.length - this.window);
    this.reports.set(agentId, list);
  }

  snapshot(nowMs = Date.now()): MonitorSnapshot {
    const views = monitoringAgentsAll(this.deps.registry.list());
    const states: AgentMonitorState[] = views.map((v) => ({
      node: v.node,
      connected: v.connected,
      plan: this.plans.get(v.id)?.plan,
      reports: this.reports.get(v.id) ?? [],
    }));
    return buildSnapshot(states, nowMs, this.runId ?? '', this.window);
  }

  /** Plans again soon; bursts of registry events make one plan. */
  private schedule(delayMs = 100): void {
    clearTimeout(this.pending);
    this.pending = setTimeout(() => {
      this.planning = this.planning
        .then(() => this.replan())
        .catch((err: unknown) => this.deps.log.warn('monitor planning failed', { error: (err as Error).message }));
    }, delayMs);
    this.pending.unref();
  }

  private async replan(): Promise<void> {
    const { registry, log } = this.deps;
    const run = this.deps.activeRun();
    this.runId = run?.id;
    const agents = registry.list().map(viewOf);
    const nodeStatus = this.opts.nodeStatus?.();
    const allNodes = monitoringAgents(agents).map((a) => a.node);
    const pausedNodes = run
      ? nodesOfRun(run.cluster, (id) => registry.get(id)?.info.nodeName, allNodes)
      : new Set<string>();
    if (!run) {
      const endpoints = serviceEndpoints({ agents, ...(nodeStatus ? { nodeStatus } : {}) });
      await this.service.sync(endpoints[0]?.port ?? 0, endpoints);
    }
    const service = this.service.service;
    const bodies = buildPlans({
      agents,
      pausedNodes,
      ...(nodeStatus ? { nodeStatus } : {}),
      ...(run ? { runId: run.id } : {}),
      ...(service ? { service } : {}),
    });
    for (const [id, body] of bodies) {
      const key = JSON.stringify(body);
      if (this.plans.get(id)?.key === key) continue;
      const plan: MonitorPlan = { generation: ++this.generation, ...body };
      try {
        registry.send(id, { body: { $case: 'monitorPlan', value: plan } });
        this.plans.set(id, { key, plan });
      } catch (err) {
        log.debug('cannot send monitor plan', { agent: id, error: (err as Error).message });
      }
    }
  }
}

/** Every agent that announced monitoring, connected or not, one per node. */
function monitoringAgentsAll(entries: readonly AgentEntry[]): MonitorAgentView[] {
  const seen = new Set<string>();
  return entries.map(viewOf).filter((v) => v.capability.enabled && !seen.has(v.node) && seen.add(v.node));
}
