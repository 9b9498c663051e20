/**
 * Continuous monitoring on one node: answers peers' probes, probes the peers
 * the collector's plan names every interval (jittered, spread over the round),
 * reads the node's dataplane once per round into gauges, and reports each
 * round to the collector. While a benchmark run uses the node (the plan says
 * so, or the agent runs a job) nothing is probed or read.
 */

import type { Logger } from '../../core/log.js';
import { sleep } from '../../core/sleep.js';
import type { BpfMapState, MonitorCapability, MonitorPlan, MonitorReport } from '../../gen/cnibench/v1/agent.js';
import { DataplaneSampler, type SampleBody } from '../samplers/dataplane-sampler.js';
import { MONITOR_RULES_CADENCE } from '../samplers/rules-cadence.js';
import { readBpfMaps } from './bpf-maps.js';
import { dataplaneSeries, failedSections } from './dataplane-series.js';
import { HostResponder } from './host-responder.js';
import { IncomingTracker } from './incoming.js';
import type { AgentMetrics } from './metrics.js';
import { RoundOutcomes } from './outcomes.js';
import { httpServiceProbe, KeptConnection, tcpConnectProbe } from './probes.js';
import { probeErrorReason } from './protocol.js';
import { ProbeResponder } from './responder.js';
import {
  connectionKey,
  nextRoundDelay,
  type ProbeTask,
  roundTasks,
  SPREAD_SHARE,
  shuffle,
  spreadOffsets,
} from './schedule.js';

export interface MonitorOptions {
  node: string;
  intervalMs: number;
  jitter: number;
  timeoutMs: number;
  port: number;
  peers: number;
  /** The node's network namespace ('' = the agent's own, then no host responder). */
  hostNetns: string;
  hostProbes: boolean;
  bpfMapPrefixes: readonly string[];
  processNames: readonly string[];
}

export interface MonitorDeps {
  metrics: AgentMetrics;
  log: Logger;
  /** Sends a round's report (main drops it while the collector link is down). */
  report: (r: MonitorReport) => void;
  /** True while the agent runs a benchmark job. */
  busy: () => boolean;
  random?: () => number;
}

export class Monitor {
  private plan: MonitorPlan | undefined;
  private readonly responder: ProbeResponder;
  private readonly host: HostResponder | undefined;
  private readonly incoming = new IncomingTracker();
  private readonly kept = new Map<string, KeptConnection>();
  private readonly sampler: DataplaneSampler;
  private readonly random: () => number;
  private last: { sample: SampleBody; maps: BpfMapState[] } | undefined;

  constructor(
    private readonly opts: MonitorOptions,
    private readonly deps: MonitorDeps,
  ) {
    this.random = deps.random ?? Math.random;
    const idleTimeoutMs = Math.max(60_000, 3 * opts.intervalMs);
    this.responder = new ProbeResponder({
      node: opts.node,
      port: opts.port,
      idleTimeoutMs,
      onIncoming: (source, kind) => this.onIncoming(source, kind),
    });
    if (opts.hostNetns && opts.hostProbes)
      this.host = new HostResponder({
        hostNetns: opts.hostNetns,
        node: opts.node,
        port: opts.port,
        idleTimeoutMs,
        log: deps.log,
      });
    // Its own sampler: the process CPU rates of a run's samples must not be cut short by monitoring reads.
    this.sampler = new DataplaneSampler({
      hostNetns: opts.hostNetns,
      processNames: opts.processNames,
      rulesCadence: MONITOR_RULES_CADENCE,
    });
  }

  /** Binds the pod responder and starts the host one; what Register announces. */
  async start(signal: AbortSignal): Promise<MonitorCapability> {
    await this.responder.listen();
    const host = (await this.host?.ensure(signal)) ?? false;
    return {
      enabled: true,
      probePort: this.opts.port,
      hostProbePort: host ? this.opts.port : 0,
      peers: this.opts.peers,
      intervalMs: this.opts.intervalMs,
    };
  }

  /** A new plan from the collector: series and kept connections of peers that left it go. */
  setPlan(plan: MonitorPlan): void {
    this.plan = plan;
    this.deps.metrics.setPeers(plan.peers.map((p) => p.nodeName));
    const keep = new Set(roundTasks({ ...plan, paused: false }).map(connectionKey));
    for (const [key, c] of this.kept) {
      if (!keep.has(key)) {
        c.close();
        this.kept.delete(key);
      }
    }
  }

  private paused(): boolean {
    return (this.plan?.paused ?? false) || this.deps.busy();
  }

  /** Rounds until `signal` aborts; the first starts at a random point of the first interval, so agents do not probe in step. */
  async run(signal: AbortSignal): Promise<void> {
    const { intervalMs, jitter } = this.opts;
    await sleep(Math.floor(this.random() * intervalMs), signal);
    while (!signal.aborted) {
      const began = Date.now();
      await this.round(signal).catch((err: unknown) =>
        this.deps.log.warn('monitor round failed', { error: (err as Error).message }),
      );
      const wait = nextRoundDelay(intervalMs, jitter, this.random) - (Date.now() - began);
      await sleep(Math.max(0, wait), signal);
    }
    await this.stop();
  }

  private async stop(): Promise<void> {
    for (const c of this.kept.values()) c.close();
    this.kept.clear();
    await Promise.all([this.responder.close(), this.host?.stop(), this.sampler.close()]);
  }

  private async round(signal: AbortSignal): Promise<void> {
    const paused = this.paused();
    this.deps.metrics.round(paused);
    const outcomes = new RoundOutcomes();
    if (!paused) {
      if (this.host && !this.host.running) await this.host.ensure(signal);
      const tasks = shuffle(roundTasks(this.plan), this.random);
      const offsets = spreadOffsets(tasks.length, this.opts.intervalMs * SPREAD_SHARE, this.random);
      const read = this.readDataplane(signal);
      await Promise.all(
        tasks.map((t, i) =>
          sleep(offsets[i] ?? 0, signal).then(() => (signal.aborted ? undefined : this.probe(t, outcomes))),
        ),
      );
      await read;
      this.updatePeerUp(outcomes);
    }
    this.deps.report(this.buildReport(paused, outcomes));
  }

  private async probe(t: ProbeTask, outcomes: RoundOutcomes): Promise<void> {
    if (this.paused()) return;
    const { node, timeoutMs } = this.opts;
    const to = { host: t.host, port: t.port, node: t.target };
    try {
      let us: number;
      let answeredBy: string | undefined;
      if (t.type === 'tcp-connect' || t.type === 'host-tcp-connect') us = await tcpConnectProbe(to, node, timeoutMs);
      else if (t.type === 'http-service')
        ({ us, node: answeredBy } = await httpServiceProbe(t.host, t.port, node, timeoutMs));
      else us = await this.keptConnection(t).requestResponse(timeoutMs);
      outcomes.ok(t.type, t.target, us, answeredBy);
      // A peer the plan dropped while its probe ran must not get its series back.
      if (this.planned(t.target)) this.deps.metrics.probeOk(t.type, t.target, us / 1e6);
    } catch (err) {
      const reason = probeErrorReason(err);
      outcomes.fail(t.type, t.target, reason);
      if (this.planned(t.target)) this.deps.metrics.probeError(t.type, t.target, reason);
    }
  }

  private planned(target: string): boolean {
    return target === '' || (this.plan?.peers.some((p) => p.nodeName === target) ?? false);
  }

  private keptConnection(t: ProbeTask): KeptConnection {
    const key = connectionKey(t);
    let c = this.kept.get(key);
    if (!c) {
      c = new KeptConnection({ host: t.host, port: t.port, node: t.target }, this.opts.node);
      this.kept.set(key, c);
    }
    return c;
  }

  private updatePeerUp(outcomes: RoundOutcomes): void {
    const failing = outcomes.failingTargets();
    for (const p of this.plan?.peers ?? [])
      if (!p.paused) this.deps.metrics.setPeerUp(p.nodeName, !failing.has(p.nodeName));
  }

  /** One dataplane read into gauges; a failure is counted, never published as zeros. */
  private async readDataplane(signal: AbortSignal): Promise<void> {
    try {
      const { chains: _chains, ...sample } = await this.sampler.sample(signal);
      const s: SampleBody = { ...sample, chains: [] };
      const bpfFailed = failedSections(s.errors).includes('bpf');
      const maps = bpfFailed
        ? undefined
        : (s.bpf?.maps ?? 0) > 0
          ? await readBpfMaps(this.opts.hostNetns, this.opts.bpfMapPrefixes, s.bpf?.lbServiceEntries, signal)
          : [];
      const intervalMs = this.last ? s.timeMs - this.last.sample.timeMs : undefined;
      this.deps.metrics.setDataplane(dataplaneSeries(this.opts.node, s, maps, intervalMs), s.timeMs);
      if (!failedSections(s.errors).includes('conntrack')) this.deps.metrics.conntrackDropsSeen(s.conntrackDrops);
      this.last = { sample: s, maps: maps ?? this.last?.maps ?? [] };
    } catch (err) {
      if (signal.aborted) return;
      this.deps.metrics.readFailed('sample');
      this.deps.log.warn('dataplane read failed', { error: (err as Error).message });
    }
  }

  private onIncoming(source: string, kind: 'tcp' | 'http'): void {
    this.incoming.record(source, Date.now());
    this.deps.metrics.incomingProbe(kind);
  }

  private buildReport(paused: boolean, outcomes: RoundOutcomes): MonitorReport {
    const sources = this.incoming.sources(Date.now(), 2 * this.opts.intervalMs);
    this.deps.metrics.setIncomingSources(sources.length);
    return {
      planGeneration: this.plan?.generation ?? 0,
      timeMs: Date.now(),
      intervalMs: this.opts.intervalMs,
      paused,
      probes: outcomes.list(),
      dataplane: this.last ? { ...this.last.sample, runId: '', samplingJobId: '' } : undefined,
      bpfMaps: this.last?.maps ?? [],
      incomingSources: sources,
    };
  }
}
