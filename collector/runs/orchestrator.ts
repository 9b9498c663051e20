/**
 * Executes runs phase by phase: starts the servers a measurement needs and waits
 * until they listen, puts a Service in front when the path asks for one, runs an
 * unrecorded warm-up, then the measured clients at a start time set in advance,
 * and stores what comes back. Whatever happens, it cancels its jobs on the agents
 * and removes its Services before the run is marked ended.
 */
import { asCniBenchError, CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { ServiceFrontend, SyncTarget } from '../../core/service-frontend.js';
import type { DataplaneSample } from '../../gen/cnibench/v1/agent.js';
import type { AgentEntry, AgentRegistry } from '../agents/registry.js';
import type { CollectorMetrics } from '../metrics.js';
import type { PhaseRecord, RunState, Store } from '../store/store.js';
import { describeCluster } from './cluster-description.js';
import { agentProbes } from './condition-probes.js';
import { ConditionRunner } from './condition-runner.js';
import { takeCpuBaseline } from './cpu-baseline.js';
import { refuseDisruptions } from './disruption-events.js';
import { DisruptionPhase } from './disruption-phase.js';
import type { JobTracker } from './job-tracker.js';
import { MeasurePhase, placementOf, serviceName } from './measure-phase.js';
import { type PhaseSpec, phasesOf } from './phases.js';
import { planRun, type RunPlan } from './plan.js';
import { JobSender, type RunContext, runAgents } from './run-context.js';
import type { Scenario } from './scenario.js';
import { aboveBaseline, baselineOf, checkSync, programmingLatency, type SyncCheck, type SyncPoll } from './sync.js';

const BOUNDARY_SAMPLE_TIMEOUT_MS = 15_000;
/** A sample of a node with tens of thousands of rules takes seconds; polls for sync wait this long per sample. */
const SYNC_SAMPLE_TIMEOUT_MS = 60_000;
const SYNC_POLL_PAUSE_MS = 200;

export interface OrchestratorDeps {
  store: Store;
  registry: AgentRegistry;
  tracker: JobTracker;
  metrics: CollectorMetrics;
  log: Logger;
  services?: ServiceFrontend;
  /** Whether a node may carry a run's load when the scenario names none (Kubernetes: schedulable workers). */
  canLoad?: (nodeName: string) => boolean;
}

export class Orchestrator {
  private readonly active = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private readonly sender: JobSender;
  private readonly measure: MeasurePhase;
  private readonly disruption: DisruptionPhase;

  constructor(private readonly deps: OrchestratorDeps) {
    deps.registry.on('lost', (id) => deps.tracker.agentLost(id));
    this.sender = new JobSender(deps.registry, deps.tracker);
    this.measure = new MeasurePhase(this.sender, deps.tracker, deps.services);
    this.disruption = new DisruptionPhase(this.sender, deps.tracker, deps.services, this.measure);
  }

  isActive(runId: string): boolean {
    return this.active.has(runId);
  }

  /** Id of the run executing now, if any. */
  activeRunId(): string | undefined {
    return this.active.keys().next().value;
  }

  /** Starts executing a stored, pending run in the background. */
  start(runId: string, scenario: Scenario, plan: RunPlan): void {
    const abort = new AbortController();
    const done = this.execute(runId, scenario, plan, abort.signal)
      .catch((err: unknown) => this.endOnStoreFailure(runId, err))
      .finally(() => this.active.delete(runId));
    this.active.set(runId, { abort, done });
  }

  /**
   * The store refused a write the run needed (a full disk): the run ends failed
   * with that one line. Its state stays in the store's memory (what the APIs
   * show) until the disk takes it; the collector itself goes on.
   */
  private endOnStoreFailure(runId: string, err: unknown): void {
    const e = asCniBenchError(err);
    this.deps.log.error('run ended: the store cannot write', { runId, error: e.message });
    try {
      this.deps.store.updateRun(runId, { state: 'failed', reason: e.message, endedMs: Date.now() });
    } catch {
      // Kept in memory by the store and written once it can.
    }
    this.deps.metrics.runEnded('failed', 0);
  }

  /** Asks a run to stop without waiting; false when it is not executing here. */
  requestCancel(runId: string): boolean {
    const a = this.active.get(runId);
    if (!a) return false;
    a.abort.abort();
    return true;
  }

  /** Asks a run to stop; resolves once its cleanup has finished. */
  async cancel(runId: string): Promise<void> {
    const a = this.active.get(runId);
    if (!a) return;
    a.abort.abort();
    await a.done;
  }

  /** Waits for a run to end (tests, CLI). */
  async wait(runId: string): Promise<void> {
    await this.active.get(runId)?.done;
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.active.keys()].map((id) => this.cancel(id)));
  }

  plan(scenario: Scenario): RunPlan {
    const plan = planRun(
      scenario,
      this.deps.registry.available(),
      this.deps.services !== undefined,
      this.deps.services?.scale !== undefined,
      this.deps.canLoad,
    );
    refuseDisruptions(scenario, plan, this.deps.services);
    return plan;
  }

  private async execute(runId: string, scenario: Scenario, plan: RunPlan, signal: AbortSignal): Promise<void> {
    const { store, metrics, log } = this.deps;
    const began = Date.now();
    const ctx: RunContext = {
      runId,
      scenario,
      plan,
      signal,
      servers: new Map(),
      services: new Map(),
      jobs: [],
      jobSeq: 0,
      scaled: false,
      warmed: new Set(),
    };
    ctx.conditions = new ConditionRunner(runId, plan, this.deps.services?.conditions, log, () =>
      agentProbes(ctx, this.sender, this.deps.tracker, this.deps.registry),
    );
    const phases = phasesOf(
      scenario,
      scenario.measurements.filter((m) => plan.measurements.some((x) => x.id === m.id)),
    );
    // The cluster as it is when the run starts (Kubernetes frontends only: the lab knows its own).
    if (this.deps.services?.refreshCluster) await this.deps.services.refreshCluster().catch(() => undefined);
    store.updateRun(runId, { state: 'running', startedMs: began, cluster: this.describe(plan) });
    metrics.runStarted();
    for (const [index, p] of phases.entries())
      store.upsertPhase({
        runId,
        index,
        name: p.name,
        state: 'pending',
        error: '',
        startedMs: 0,
        endedMs: 0,
        detail: specDetail(p),
      });
    let failed = 0;
    let fatal: Error | undefined;
    try {
      if (scenario.sampleIntervalMs > 0) {
        for (const a of runAgents(plan))
          this.sender.send(ctx, a, { $case: 'startSampling', value: { intervalMs: scenario.sampleIntervalMs } });
      }
      if (scenario.cpuBaselineSeconds > 0)
        ctx.cpuBaseline = await takeCpuBaseline(this.sender, ctx, scenario.cpuBaselineSeconds);
      const scaleSteps = phases.filter((p) => p.kind === 'scale');
      const scaler = this.deps.services?.scale;
      if (scaleSteps.length && scaler?.prepare) {
        ctx.scaled = true;
        await scaler.prepare(
          Math.max(...scaleSteps.map((p) => p.services)),
          scaleSteps[0]?.endpointsPerService ?? 1,
          runId,
          { samples: () => this.sampleNodes(ctx), signal },
        );
      }
      for (const [index, p] of phases.entries()) {
        if (signal.aborted) break;
        const ok = await this.phase(ctx, index, p).catch((err: unknown) => {
          const e = asCniBenchError(err);
          if (
            e.code === ErrorCodes.CANCELLED ||
            e.code === ErrorCodes.AGENT_LOST ||
            e.code === ErrorCodes.STORE ||
            p.kind === 'scale'
          )
            throw e;
          return false;
        });
        if (!ok) failed++;
      }
    } catch (err) {
      fatal = asCniBenchError(err);
    } finally {
      await this.cleanup(ctx);
    }
    let state: RunState = 'succeeded';
    let reason = '';
    if (signal.aborted) [state, reason] = ['cancelled', 'cancelled by request'];
    else if (fatal) [state, reason] = ['failed', fatal.message];
    else if (failed) [state, reason] = ['failed', `${failed} of ${phases.length} phases failed`];
    this.markUnfinishedPhases(runId, state === 'cancelled' ? 'cancelled' : 'failed', reason);
    store.updateRun(runId, { state, reason, endedMs: Date.now() });
    metrics.runEnded(state, (Date.now() - began) / 1000);
    log.info('run ended', { runId, state, reason });
  }

  private markUnfinishedPhases(runId: string, state: 'cancelled' | 'failed', reason: string): void {
    for (const p of this.deps.store.phases(runId)) {
      if (p.state === 'pending' || p.state === 'running')
        this.deps.store.upsertPhase({ ...p, state, error: p.error || reason, endedMs: p.endedMs || Date.now() });
    }
  }

  private describe(plan: RunPlan): Record<string, unknown> {
    const node = (a: AgentEntry) => ({
      node: a.id,
      podIp: a.info.podIp,
      hostIp: a.info.hostIp,
      kernel: a.info.kernel,
      cpus: a.info.cpus,
      agentVersion: a.info.agentVersion,
      tools: a.info.tools.map((t) => ({ name: t.name, version: t.version })),
      dataplane: a.info.dataplane,
      labels: a.info.labels,
    });
    return {
      server: node(plan.server),
      client: node(plan.client),
      ...(plan.peer ? { peer: node(plan.peer) } : {}),
      serviceFrontend: this.deps.services?.description ?? 'none',
      skipped: plan.skipped,
      description: describeCluster(plan, this.deps.services?.cluster),
    };
  }

  /** Runs one phase; resolves false (phase marked failed) on a measurement error. */
  private async phase(ctx: RunContext, index: number, spec: PhaseSpec): Promise<boolean> {
    const { store, log } = this.deps;
    const base: PhaseRecord = {
      runId: ctx.runId,
      index,
      name: spec.name,
      state: 'running',
      error: '',
      startedMs: Date.now(),
      endedMs: 0,
      detail: specDetail(spec),
    };
    store.upsertPhase(base);
    try {
      if (spec.kind === 'condition') {
        const evidence = await (ctx.conditions as ConditionRunner).run(spec, ctx.signal);
        store.upsertPhase({
          ...base,
          detail: { ...specDetail(spec), evidence },
          state: 'succeeded',
          endedMs: Date.now(),
        });
        return true;
      }
      if (spec.kind === 'measure' && spec.condition) ctx.conditions?.check(spec);
      if (spec.kind === 'scale') {
        const detail = await this.scale(ctx, spec, (d) => store.upsertPhase({ ...base, detail: d }));
        store.upsertPhase({ ...base, detail, state: 'succeeded', endedMs: Date.now() });
        return true;
      }
      const m = ctx.plan.measurements.find((x) => x.id === spec.measurement.id);
      if (!m) throw new CniBenchError(ErrorCodes.INTERNAL, `measurement '${spec.measurement.id}' is not in the plan`);
      const place = placementOf(m, ctx.plan);
      const startSamples = await this.boundarySample(ctx);
      if (m.kind === 'disruption') {
        const detail: Record<string, unknown> = { ...specDetail(spec), measurement: m, serverNode: ctx.plan.server.id };
        Object.assign(detail, { clientNode: place.client.id, startSamples });
        store.upsertPhase({ ...base, detail });
        const record = await this.disruption.run(ctx, index, m, place);
        detail.disruption = record;
        detail.endSamples = await this.boundarySample(ctx);
        const error = record.error ? `event ${record.event} failed: ${record.error}` : '';
        store.upsertPhase({ ...base, detail, state: error ? 'failed' : 'succeeded', error, endedMs: Date.now() });
        if (error) log.warn('phase failed', { runId: ctx.runId, phase: index, error });
        return !error;
      }
      const target = await this.measure.target(ctx, m, place);
      const detail: Record<string, unknown> = {
        ...specDetail(spec),
        measurement: m,
        serverNode: ctx.plan.server.id,
        clientNode: place.client.id,
        target,
        startSamples,
        ...(ctx.cpuBaseline ? { cpuBaseline: ctx.cpuBaseline } : {}),
      };
      store.upsertPhase({ ...base, detail });
      detail.rounds = await this.measure.rounds(ctx, index, m, place, target, spec.condition ? undefined : spec.step);
      detail.endSamples = await this.boundarySample(ctx);
      // Ended after its end samples, so the phase's window holds both boundaries.
      store.upsertPhase({ ...base, detail, state: 'succeeded', endedMs: Date.now() });
      return true;
    } catch (err) {
      const e = asCniBenchError(err);
      const cancelled = e.code === ErrorCodes.CANCELLED;
      store.upsertPhase({ ...base, state: cancelled ? 'cancelled' : 'failed', error: e.message, endedMs: Date.now() });
      if (!cancelled) log.warn('phase failed', { runId: ctx.runId, phase: index, error: e.message });
      // A step whose dataplane never caught up ends the sweep: measuring on top of it would be meaningless.
      if (cancelled || e.code === ErrorCodes.AGENT_LOST || e.code === ErrorCodes.STORE || spec.kind === 'scale')
        throw e;
      return false;
    }
  }

  /**
   * Programs a sweep step's dummy Services through the service frontend, then
   * samples every connected node until its dataplane shows them (never a fixed
   * sleep), and records how long programming and sync took.
   */
  private async scale(
    ctx: RunContext,
    spec: Extract<PhaseSpec, { kind: 'scale' }>,
    progress: (d: Record<string, unknown>) => void,
  ): Promise<Record<string, unknown>> {
    const scaler = this.deps.services?.scale;
    if (!scaler)
      throw new CniBenchError(ErrorCodes.VALIDATION, 'serviceScale: this collector cannot create Services', {
        details: { field: 'serviceScale' },
      });
    ctx.scaled = true;
    const agents = this.deps.registry.available();
    // A frontend that counts from the cluster's own Services needs each node's count before the first step.
    ctx.scaleBaseline ??= await this.baselines(ctx, agents);
    const beganMs = Date.now();
    const step = await scaler.setDummyServices(spec.services, spec.endpointsPerService, ctx.runId);
    const writtenMs = Date.now();
    const targetOf = (agentId: string) =>
      step.added === undefined ? step.expect : aboveBaseline(ctx.scaleBaseline?.get(agentId), step.added);
    const detail: Record<string, unknown> = {
      ...specDetail(spec),
      programmingMs: step.programmingMs,
      expect: step.added === undefined ? step.expect : Object.fromEntries(agents.map((a) => [a.id, targetOf(a.id)])),
    };
    progress(detail);
    const syncBegan = Date.now();
    const deadline = syncBegan + spec.syncTimeoutMs;
    let polls = 0;
    let pollMs = 0;
    let last: Record<string, SyncCheck> = {};
    const rounds: SyncPoll[] = [];
    for (;;) {
      if (ctx.signal.aborted)
        throw new CniBenchError(ErrorCodes.CANCELLED, 'cancelled while waiting for dataplane sync');
      polls++;
      const pollBegan = Date.now();
      const checks = await Promise.all(
        agents.map(async (a) => {
          const { sample } = this.sender.sampleOnce(ctx, a, SYNC_SAMPLE_TIMEOUT_MS);
          return [a.id, checkSync(await untilAborted(sample, ctx.signal), targetOf(a.id))] as const;
        }),
      );
      last = Object.fromEntries(checks);
      pollMs = Date.now() - pollBegan;
      rounds.push({ sentMs: pollBegan, receivedMs: pollBegan + pollMs, ok: checks.every(([, c]) => c.ok) });
      if (rounds.at(-1)?.ok) break;
      if (Date.now() > deadline) {
        const behind = checks.filter(([, c]) => !c.ok).map(([id, c]) => `${id}: ${c.why}`);
        throw new CniBenchError(
          ErrorCodes.TIMEOUT,
          `dataplane not in sync ${spec.syncTimeoutMs / 1000} s after programming ${spec.services} Services (${behind.join('; ')})`,
        );
      }
      await new Promise((r) => setTimeout(r, SYNC_POLL_PAUSE_MS));
    }
    // syncMs includes the last poll: the time to take and ship one sample of every node (pollMs).
    // Programming latency: from the first write until the round of samples that showed every node caught up.
    const latency = programmingLatency(beganMs, writtenMs, rounds);
    return {
      ...detail,
      syncMs: Date.now() - syncBegan,
      syncPolls: polls,
      pollMs,
      pollPauseMs: SYNC_POLL_PAUSE_MS,
      programmingLatencyMs: latency.latencyMs,
      latencyResolutionMs: latency.resolutionMs,
      nodes: last,
    };
  }

  /** One fresh sample of every connected agent's node (undefined where none came): a sweep preflight's view of the nodes. */
  private async sampleNodes(ctx: RunContext): Promise<Map<string, DataplaneSample | undefined>> {
    const agents = this.deps.registry.available();
    const samples = await Promise.all(
      agents.map((a) => this.sender.sampleOnce(ctx, a, SYNC_SAMPLE_TIMEOUT_MS).sample.catch(() => undefined)),
    );
    return new Map(agents.map((a, i) => [a.id, samples[i]]));
  }

  /** Each node's service-proxy counts before the sweep's first step. */
  private async baselines(ctx: RunContext, agents: AgentEntry[]): Promise<Map<string, SyncTarget>> {
    const out = new Map<string, SyncTarget>();
    await Promise.all(
      agents.map(async (a) => {
        const s = await this.sender.sampleOnce(ctx, a, SYNC_SAMPLE_TIMEOUT_MS).sample;
        if (!s)
          throw new CniBenchError(ErrorCodes.TIMEOUT, `no baseline dataplane sample from ${a.id} before the sweep`);
        out.set(a.id, baselineOf(s));
      }),
    );
    return out;
  }

  /**
   * Takes a dataplane sample on each node of the run now and waits for it, so
   * a phase's counters are read exactly at its boundaries (and the periodic
   * sampler can stay slow enough not to disturb the measurement). Returns the
   * sampling job id per node, recorded in the phase so the report finds them.
   */
  private async boundarySample(ctx: RunContext): Promise<Record<string, string>> {
    const ids: Record<string, string> = {};
    await Promise.all(
      runAgents(ctx.plan).map((a) => {
        const { jobId, sample } = this.sender.sampleOnce(ctx, a, BOUNDARY_SAMPLE_TIMEOUT_MS);
        ids[a.id] = jobId;
        return sample;
      }),
    );
    return ids;
  }

  /** Cancels every job of the run on its agents and removes its Services. Never throws. */
  private async cleanup(ctx: RunContext): Promise<void> {
    await ctx.conditions?.cleanup();
    for (const a of runAgents(ctx.plan)) {
      try {
        this.deps.registry.send(a.id, {
          body: {
            $case: 'job',
            value: {
              jobId: `${ctx.runId}-cancel`,
              runId: ctx.runId,
              kind: { $case: 'cancel', value: { jobId: '', runId: ctx.runId } },
            },
          },
        });
      } catch (err) {
        this.deps.log.warn('cannot cancel jobs on agent', { agent: a.id, error: (err as Error).message });
      }
    }
    if (ctx.scaled) {
      await this.deps.services?.scale
        ?.setDummyServices(0, 1, ctx.runId)
        .catch((err: unknown) => this.deps.log.warn('cannot remove dummy services', { error: (err as Error).message }));
      await this.deps.services?.scale?.finish?.();
    }
    for (const [tool] of ctx.services) {
      await this.deps.services
        ?.remove(serviceName(tool))
        .catch((err: unknown) => this.deps.log.warn('cannot remove service', { error: (err as Error).message }));
    }
    for (const jobId of ctx.jobs) this.deps.tracker.forget(jobId);
  }
}

/** What a phase record says about its spec before it runs. */
function specDetail(p: PhaseSpec): Record<string, unknown> {
  if (p.kind === 'condition') return { condition: { action: p.action, group: p.group, request: p.request } };
  if (p.kind === 'scale') return { scale: { services: p.services, endpointsPerService: p.endpointsPerService } };
  return {
    measurement: p.measurement,
    ...(p.condition ? { condition: p.condition } : {}),
    ...(p.step !== undefined ? { step: p.step } : {}),
  };
}

/** Resolves with `p`, or with undefined as soon as `signal` aborts (the caller then sees the abort). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      () => resolve(undefined),
    );
  });
}
