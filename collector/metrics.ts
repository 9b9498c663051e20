/**
 * Every Prometheus metric the collector exports, declared once with help text.
 * Callers use the narrow helpers below and never handle label arrays.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { MonitorSnapshot } from '../gen/cnibench/v1/monitor.js';

/**
 * prom-client defaults that break Prometheus naming: gauges that end in
 * `_total` (promtool's lint refuses a non-counter with that suffix; the same
 * counts are exported per type by `nodejs_active_handles`,
 * `nodejs_active_requests` and `nodejs_active_resources`), and event-loop lag
 * quantiles as separate gauges (precomputed percentiles that cannot be
 * aggregated; `nodejs_eventloop_lag_seconds` stays).
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
  'nodejs_eventloop_lag_p50_seconds',
  'nodejs_eventloop_lag_p90_seconds',
  'nodejs_eventloop_lag_p99_seconds',
];

export class CollectorMetrics {
  readonly registry = new Registry();
  private readonly agentsConnected = new Gauge({
    name: 'cni_bench_agents_connected',
    help: 'Agents with an open session stream',
    registers: [this.registry],
  });
  private readonly agentsRegistered = new Gauge({
    name: 'cni_bench_agents_registered',
    help: 'Agents known to the collector (connected or not)',
    registers: [this.registry],
  });
  private readonly agentMessages = new Counter({
    name: 'cni_bench_agent_messages_total',
    help: 'Sequenced messages received from agents, by type and outcome (stored, duplicate, refused, out-of-window)',
    labelNames: ['type', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly agentDropped = new Counter({
    name: 'cni_bench_agent_outbox_dropped_total',
    help: 'Messages an agent dropped because its unacknowledged buffer overflowed (increases of what it reports; an agent restart starts again from its new count)',
    labelNames: ['agent'] as const,
    registers: [this.registry],
  });
  /** The count each agent last reported, to turn its running total into counter increments. */
  private readonly droppedSeen = new Map<string, number>();
  private readonly agentsLost = new Counter({
    name: 'cni_bench_agents_lost_total',
    help: 'Agents declared lost after the liveness timeout',
    registers: [this.registry],
  });
  private readonly runs = new Counter({
    name: 'cni_bench_runs_total',
    help: 'Runs that ended, by final state',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  private readonly runsActive = new Gauge({
    name: 'cni_bench_runs_active',
    help: 'Runs currently executing',
    registers: [this.registry],
  });
  private readonly runDuration = new Histogram({
    name: 'cni_bench_run_duration_seconds',
    help: 'Wall time of finished runs',
    buckets: [10, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [this.registry],
  });

  /** Where the cluster-level monitoring gauges are read from at scrape time (the monitor coordinator). */
  private monitorSource: (() => MonitorSnapshot) | undefined;

  constructor(defaults = true) {
    if (defaults) {
      // Unprefixed: the standard process_* and nodejs_* names dashboards and alerts expect; the job label says whose.
      collectDefaultMetrics({ register: this.registry });
      for (const name of MISNAMED_DEFAULTS) this.registry.removeSingleMetric(name);
    }
    this.monitorGauges();
  }

  /** Sets the monitoring view the cluster-level gauges are computed from. */
  setMonitorSource(source: () => MonitorSnapshot): void {
    this.monitorSource = source;
  }

  /**
   * Cluster-level monitoring gauges, computed from the latest snapshot when
   * scraped: node states, pair states, coverage and failures per node, and each node's
   * conntrack fill, largest counted BPF map fill and KUBE-SERVICES length.
   */
  private monitorGauges(): void {
    // One snapshot serves every gauge of a scrape.
    let cache: { atMs: number; snap: MonitorSnapshot | undefined } | undefined;
    const read = (): MonitorSnapshot | undefined => {
      if (!cache || Date.now() - cache.atMs > 500) cache = { atMs: Date.now(), snap: this.monitorSource?.() };
      return cache.snap;
    };
    const gauge = (
      name: string,
      help: string,
      labelNames: string[],
      fill: (g: Gauge<string>, s: MonitorSnapshot) => void,
    ): void => {
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        collect() {
          this.reset();
          const s = read();
          if (s) fill(this, s);
        },
      });
    };
    gauge(
      'cni_bench_monitor_nodes',
      'Monitoring agents by state (probing, paused, starting, stale, disconnected)',
      ['state'],
      (g, s) => {
        for (const state of ['probing', 'paused', 'starting', 'stale', 'disconnected'])
          g.set({ state }, s.nodes.filter((n) => n.state === state).length);
      },
    );
    gauge(
      'cni_bench_monitor_pairs',
      'Planned node pairs by the state of their latest probes (ok, failing, missing)',
      ['state'],
      (g, s) => {
        g.set({ state: 'ok' }, s.summary?.pairsOk ?? 0);
        g.set({ state: 'failing' }, s.summary?.pairsFailing ?? 0);
        g.set({ state: 'missing' }, s.summary?.pairsMissing ?? 0);
      },
    );
    gauge(
      'cni_bench_monitor_node_probers',
      'Nodes whose latest probes to this node succeeded (ok) or failed (failing)',
      ['node', 'state'],
      (g, s) => {
        for (const n of s.nodes) {
          g.set({ node: n.nodeName, state: 'ok' }, n.probedOk);
          g.set({ node: n.nodeName, state: 'failing' }, n.probedFailing);
        }
      },
    );
    // No precomputed quantile gauges: percentiles come from the agents' cni_bench_probe_duration_seconds
    // histograms at query time (histogram_quantile, the recording rules), merged across sources, never averaged.
    gauge(
      'cni_bench_monitor_conntrack_fill_ratio',
      'Conntrack entries over maximum per node, as last reported',
      ['node'],
      (g, s) => {
        for (const n of s.nodes)
          if (n.dataplane && n.dataplane.conntrackMax > 0) g.set({ node: n.nodeName }, n.dataplane.conntrackFillRatio);
      },
    );
    gauge(
      'cni_bench_monitor_bpf_map_fill_ratio_max',
      'Fullest counted BPF map per node, as last reported',
      ['node'],
      (g, s) => {
        for (const n of s.nodes) {
          const fills = (n.dataplane?.bpfMaps ?? [])
            .filter((m) => m.entries !== undefined && m.maxEntries > 0)
            .map((m) => (m.entries ?? 0) / m.maxEntries);
          if (fills.length) g.set({ node: n.nodeName }, Math.max(...fills));
        }
      },
    );
    gauge(
      'cni_bench_monitor_kube_services_rules',
      'KUBE-SERVICES rules per node, as last reported',
      ['node'],
      (g, s) => {
        for (const n of s.nodes) if (n.dataplane) g.set({ node: n.nodeName }, n.dataplane.kubeServicesRules);
      },
    );
  }

  setAgents(connected: number, registered: number): void {
    this.agentsConnected.set(connected);
    this.agentsRegistered.set(registered);
  }

  /** `outcome`: stored, duplicate, refused (not the sender's job or run) or out-of-window (sequence jump). */
  agentMessage(type: string, outcome: 'stored' | 'duplicate' | 'refused' | 'out-of-window'): void {
    this.agentMessages.inc({ type, outcome });
  }

  /** Per agent: the series lives as long as the agent is registered (bounded by the registry). */
  agentOutboxDropped(agent: string, dropped: number): void {
    const seen = this.droppedSeen.get(agent);
    // Lower than before: the agent restarted and counts from zero again.
    const delta = seen === undefined ? dropped : dropped >= seen ? dropped - seen : dropped;
    this.droppedSeen.set(agent, dropped);
    this.agentDropped.inc({ agent }, delta);
  }

  agentForgotten(agent: string): void {
    this.droppedSeen.delete(agent);
    this.agentDropped.remove({ agent });
  }

  agentLost(): void {
    this.agentsLost.inc();
  }

  runStarted(): void {
    this.runsActive.inc();
  }

  runEnded(state: string, seconds: number): void {
    this.runsActive.dec();
    this.runs.inc({ state });
    this.runDuration.observe(seconds);
  }
}
