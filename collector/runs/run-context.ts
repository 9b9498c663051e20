/**
 * What one executing run holds, and the two operations every phase needs:
 * sending a job to an agent (tracked, so cleanup can cancel it) and taking a
 * one-shot sample, and starting a server once per run. Shared by the
 * orchestrator and the phases.
 */

import type { SyncTarget } from '../../core/service-frontend.js';
import { type Job, JobState } from '../../gen/cnibench/v1/agent.js';
import type { AgentEntry, AgentRegistry } from '../agents/registry.js';
import type { ConditionRunner } from './condition-runner.js';
import type { JobMeta, JobTracker } from './job-tracker.js';
import type { RunPlan } from './plan.js';
import type { Scenario } from './scenario.js';

export interface RunContext {
  runId: string;
  scenario: Scenario;
  plan: RunPlan;
  signal: AbortSignal;
  /** Server job id by `tool@network`. */
  servers: Map<string, string>;
  /** Service address by server tool. */
  services: Map<string, { ip: string; port: number }>;
  jobs: string[];
  jobSeq: number;
  /** A sweep put dummy Services in place; cleanup removes them. */
  scaled: boolean;
  /** Warm-ups done (measure-phase.ts warmupKey): a phase on a warm server and path skips its own. */
  warmed: Set<string>;
  /** Each node's service-proxy counts before the sweep's first step (frontends with relative targets). */
  scaleBaseline?: Map<string, SyncTarget>;
  /** Idle CPU baseline sample ids per agent, taken before the first phase (cpu-baseline.ts). */
  cpuBaseline?: Record<string, { before: string; after: string }>;
  /** The run's overhead conditions (condition-runner.ts): reverted by cleanup. */
  conditions?: ConditionRunner;
}

/** How long a server job may take to listen. */
export const SERVER_READY_TIMEOUT_MS = 20_000;

export class JobSender {
  constructor(
    private readonly registry: AgentRegistry,
    private readonly tracker: JobTracker,
  ) {}

  nextJobId(ctx: RunContext): string {
    return `${ctx.runId}-j${++ctx.jobSeq}`;
  }

  send(
    ctx: RunContext,
    agent: AgentEntry,
    kind: NonNullable<Job['kind']>,
    meta: Partial<Pick<JobMeta, 'phaseIndex' | 'warmup' | 'round' | 'jobId'>> = {},
  ): string {
    const jobId = meta.jobId ?? this.nextJobId(ctx);
    ctx.jobs.push(jobId);
    this.tracker.expect({
      jobId,
      runId: ctx.runId,
      agentId: agent.id,
      phaseIndex: meta.phaseIndex ?? null,
      warmup: meta.warmup ?? false,
      ...(meta.round !== undefined ? { round: meta.round } : {}),
    });
    this.registry.send(agent.id, { body: { $case: 'job', value: { jobId, runId: ctx.runId, kind } } });
    return jobId;
  }

  /**
   * Starts `server` on `agent` once per run, kept in ctx.servers under `key`, and waits until it listens;
   * returns its job id. A server that never listened is forgotten, so no later phase reuses it.
   */
  async ensureServer(
    ctx: RunContext,
    agent: AgentEntry,
    server: { tool: string; port: number; hostNetwork: boolean },
    key: string,
  ): Promise<string> {
    const known = ctx.servers.get(key);
    if (known) return known;
    const jobId = this.send(ctx, agent, { $case: 'startServer', value: server });
    ctx.servers.set(key, jobId);
    try {
      await this.tracker.waitForState(jobId, JobState.JOB_STATE_READY, SERVER_READY_TIMEOUT_MS, ctx.signal);
    } catch (err) {
      ctx.servers.delete(key);
      throw err;
    }
    return jobId;
  }

  /** Asks `agent` for one sample now and returns its job id and the promise of the sample (undefined on timeout). */
  sampleOnce(ctx: RunContext, agent: AgentEntry, timeoutMs: number, serversOnly = false) {
    const jobId = this.nextJobId(ctx);
    const sample = this.tracker.waitForSample(jobId, timeoutMs);
    this.send(ctx, agent, { $case: 'sampleOnce', value: { serversOnly } }, { jobId });
    return { jobId, sample };
  }
}

/** Every agent a run uses, once each. */
export function runAgents(plan: RunPlan): AgentEntry[] {
  return [...new Set([plan.server, plan.client, ...(plan.peer ? [plan.peer] : [])])];
}
