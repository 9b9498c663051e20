/**
 * Every Prometheus metric the agent exports, declared once with help text, and
 * narrow helpers so callers never juggle label arrays. Probe series carry
 * type, source_node and target_node; dataplane series node and table, map or
 * process; no pod IPs. Series of a peer that left the plan, and of a map or
 * table that went away, are removed.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DataplaneSeries, SectionName, Series } from './dataplane-series.js';
import type { ErrorReason, ProbeType } from './protocol.js';

/** Probe latency buckets, 50 µs to 2.5 s. */
export const PROBE_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

type DataplaneKey = Exclude<keyof DataplaneSeries, 'failed' | 'processCpuSeconds'>;

export class AgentMetrics {
  readonly registry = new Registry();
  private readonly r = [this.registry];
  private readonly probeDuration = new Histogram({
    name: 'cni_bench_probe_duration_seconds',
    help: 'Latency of successful probes: TCP connect, request/response on a kept connection, HTTP through the probe Service',
    labelNames: ['type', 'source_node', 'target_node'] as const,
    buckets: PROBE_BUCKETS,
    registers: this.r,
  });
  private readonly probeErrors = new Counter({
    name: 'cni_bench_probe_errors_total',
    help: 'Failed probes by reason (timeout, refused, unreachable, reset, wrong-node, bad-response, http-status, other)',
    labelNames: ['type', 'source_node', 'target_node', 'reason'] as const,
    registers: this.r,
  });
  private readonly peerUp = new Gauge({
    name: 'cni_bench_probe_peer_up',
    help: '1 when every probe of the last round to the peer succeeded, else 0',
    labelNames: ['source_node', 'target_node'] as const,
    registers: this.r,
  });
  private readonly peers = new Gauge({
    name: 'cni_bench_probe_peers',
    help: 'Peers this node probes (its plan)',
    labelNames: ['node'] as const,
    registers: this.r,
  });
  private readonly incomingSources = new Gauge({
    name: 'cni_bench_probe_incoming_sources',
    help: 'Nodes that probed this node in the last two intervals',
    labelNames: ['node'] as const,
    registers: this.r,
  });
  private readonly incoming = new Counter({
    name: 'cni_bench_probe_incoming_total',
    help: 'Probes this node answered, by kind (tcp, http)',
    labelNames: ['node', 'kind'] as const,
    registers: this.r,
  });
  private readonly paused = new Gauge({
    name: 'cni_bench_probe_paused',
    help: '1 while a benchmark run uses this node and its probes pause',
    labelNames: ['node'] as const,
    registers: this.r,
  });
  private readonly rounds = new Counter({
    name: 'cni_bench_probe_rounds_total',
    help: 'Probe rounds, by outcome (probed, paused)',
    labelNames: ['node', 'outcome'] as const,
    registers: this.r,
  });
  private readonly readErrors = new Counter({
    name: 'cni_bench_dataplane_read_errors_total',
    help: 'Dataplane reads that failed, by source (iptables, nft, conntrack, bpf)',
    labelNames: ['node', 'source'] as const,
    registers: this.r,
  });
  private readonly lastRead = new Gauge({
    name: 'cni_bench_dataplane_last_read_timestamp_seconds',
    help: 'When the dataplane was last read',
    labelNames: ['node'] as const,
    registers: this.r,
  });
  private readonly conntrackDrops = new Counter({
    name: 'cni_bench_conntrack_drops_total',
    help: "Packets the node's conntrack dropped because no entry could be added (table full): drop + early_drop of /proc/net/stat/nf_conntrack, counted from the agent's first read",
    labelNames: ['node'] as const,
    registers: this.r,
  });
  /** The kernel's cumulative drop count at the last read. */
  private lastConntrackDrops: number | undefined;
  private readonly processCpu = new Counter({
    name: 'cni_bench_process_cpu_seconds_total',
    help: 'CPU time of the named dataplane processes (kube-proxy, cilium-agent, ...), summed over their pids',
    labelNames: ['node', 'process'] as const,
    registers: this.r,
  });
  private readonly dataplane: Record<DataplaneKey, Gauge<string>>;
  private readonly targetSeries = new Map<string, Set<string>>();

  constructor(private readonly node: string) {
    const g = (name: string, help: string, labelNames: string[]): Gauge<string> =>
      new Gauge({ name, help, labelNames, registers: this.r });
    this.dataplane = {
      iptablesRules: g('cni_bench_iptables_rules', 'iptables rules per table, in the backend kube-proxy uses', [
        'node',
        'table',
      ]),
      kubeServicesRules: g(
        'cni_bench_iptables_kube_services_rules',
        "Rules in kube-proxy's KUBE-SERVICES chain (nat table)",
        ['node'],
      ),
      nftRules: g('cni_bench_nftables_rules', 'nftables rules in the ruleset (absent when it is too large to list)', [
        'node',
      ]),
      nftSetElements: g(
        'cni_bench_nftables_set_elements',
        "Elements of each nftables set or map, kube-proxy's service-ips among them",
        ['node', 'table', 'map'],
      ),
      conntrackEntries: g(
        'cni_bench_conntrack_entries',
        "Connection tracking entries in the node's network namespace",
        ['node'],
      ),
      conntrackMax: g('cni_bench_conntrack_max_entries', 'nf_conntrack_max', ['node']),
      conntrackFill: g('cni_bench_conntrack_fill_ratio', 'Connection tracking entries over nf_conntrack_max', ['node']),
      bpfMaxEntries: g(
        'cni_bench_bpf_map_max_entries',
        'Maximum entries of BPF maps, by name (maps of one name summed)',
        ['node', 'map'],
      ),
      bpfMemory: g('cni_bench_bpf_map_memory_bytes', 'Kernel-accounted memory of BPF maps, by name', ['node', 'map']),
      bpfEntries: g(
        'cni_bench_bpf_map_entries',
        "Entries of the BPF maps that are counted (Cilium's LB service map, configured maps)",
        ['node', 'map'],
      ),
      bpfFill: g('cni_bench_bpf_map_fill_ratio', 'Entries over maximum entries, for the counted BPF maps', [
        'node',
        'map',
      ]),
      processPids: g('cni_bench_process_pids', 'Running processes of each named dataplane process', [
        'node',
        'process',
      ]),
      processRss: g(
        'cni_bench_process_resident_memory_bytes',
        'Resident memory of the named dataplane processes, summed over their pids',
        ['node', 'process'],
      ),
      processThreads: g('cni_bench_process_threads', 'Threads of the named dataplane processes', ['node', 'process']),
    };
    // The standard process_* names (what prom-client's collectDefaultMetrics exports), read the cheap way:
    // its default collectors (GC, event-loop histograms, /proc reads per scrape) cost more than the agent's budget allows.
    new Counter({
      name: 'process_cpu_seconds_total',
      help: 'Total user and system CPU time of the agent process in seconds',
      labelNames: ['node'],
      registers: this.r,
      collect() {
        const u = process.cpuUsage();
        this.reset();
        this.inc({ node }, (u.user + u.system) / 1e6);
      },
    });
    new Gauge({
      name: 'process_resident_memory_bytes',
      help: 'Resident memory size of the agent process in bytes',
      labelNames: ['node'],
      registers: this.r,
      collect() {
        this.set({ node }, process.memoryUsage.rss());
      },
    });
    const started = Math.round(Date.now() / 1000 - process.uptime());
    new Gauge({
      name: 'process_start_time_seconds',
      help: 'Start time of the agent process since the Unix epoch in seconds',
      labelNames: ['node'],
      registers: this.r,
      collect() {
        this.set({ node }, started);
      },
    });
  }

  probeOk(type: ProbeType, target: string, seconds: number): void {
    const labels = { type, source_node: this.node, target_node: target };
    this.track(target, 'h', labels);
    this.probeDuration.observe(labels, seconds);
  }

  probeError(type: ProbeType, target: string, reason: ErrorReason): void {
    const labels = { type, source_node: this.node, target_node: target, reason };
    this.track(target, 'e', labels);
    this.probeErrors.inc(labels);
  }

  setPeerUp(target: string, up: boolean): void {
    const labels = { source_node: this.node, target_node: target };
    this.track(target, 'u', labels);
    this.peerUp.set(labels, up ? 1 : 0);
  }

  /** The plan's peers; every series of a target no longer among them is removed. */
  setPeers(targets: readonly string[]): void {
    this.peers.set({ node: this.node }, targets.length);
    const keep = new Set([...targets, '']);
    for (const [target, keys] of this.targetSeries) {
      if (keep.has(target)) continue;
      for (const key of keys) {
        const labels = JSON.parse(key.slice(1)) as Record<string, string>;
        if (key[0] === 'h') this.probeDuration.remove(labels);
        else if (key[0] === 'e') this.probeErrors.remove(labels);
        else this.peerUp.remove(labels);
      }
      this.targetSeries.delete(target);
    }
  }

  setIncomingSources(n: number): void {
    this.incomingSources.set({ node: this.node }, n);
  }

  incomingProbe(kind: 'tcp' | 'http'): void {
    this.incoming.inc({ node: this.node, kind });
  }

  round(paused: boolean): void {
    this.paused.set({ node: this.node }, paused ? 1 : 0);
    this.rounds.inc({ node: this.node, outcome: paused ? 'paused' : 'probed' });
  }

  /** The kernel's cumulative conntrack drops: the counter grows by what it grew since the last read (from 0 on the first). */
  conntrackDropsSeen(total: number): void {
    const grew =
      this.lastConntrackDrops !== undefined && total >= this.lastConntrackDrops ? total - this.lastConntrackDrops : 0;
    this.conntrackDrops.inc({ node: this.node }, grew);
    this.lastConntrackDrops = total;
  }

  setDataplane(series: DataplaneSeries, atMs: number): void {
    for (const [key, gauge] of Object.entries(this.dataplane) as [DataplaneKey, Gauge<string>][]) {
      const list = series[key];
      if (list === undefined) continue;
      gauge.reset();
      for (const s of list) gauge.set(s.labels, s.value);
    }
    for (const s of series.processCpuSeconds) this.processCpu.inc(s.labels, s.value);
    for (const s of series.processPids) if (s.value === 0) this.processCpu.remove(s.labels);
    for (const source of series.failed) this.readErrors.inc({ node: this.node, source });
    this.lastRead.set({ node: this.node }, atMs / 1000);
  }

  readFailed(source: SectionName | 'sample'): void {
    this.readErrors.inc({ node: this.node, source });
  }

  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private track(target: string, kind: 'h' | 'e' | 'u', labels: Record<string, string>): void {
    let keys = this.targetSeries.get(target);
    if (!keys) {
      keys = new Set();
      this.targetSeries.set(target, keys);
    }
    keys.add(`${kind}${JSON.stringify(labels)}`);
  }
}

export type { Series };
