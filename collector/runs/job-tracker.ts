/**
 * Connects the jobs the orchestrator sends with what agents report back. It
 * stores every result and sample (tagged with the run and phase the job belongs
 * to) through the write queue, and acts on a message (a result awaited, a job
 * state) only once it and everything before it has committed; it lets the orchestrator await a job reaching a state or producing a
 * result, failing fast when the job fails, is cancelled, or its agent is lost.
 */
import { CniBenchError, type ErrorCode, ErrorCodes } from '../../core/errors.js';
import {
  type AgentMessage,
  type DataplaneSample,
  type JobEvent,
  type JobResult,
  JobState,
} from '../../gen/cnibench/v1/agent.js';
import type { WriteQueue } from '../store/write-queue.js';

export interface JobMeta {
  jobId: string;
  runId: string;
  agentId: string;
  phaseIndex: number | null;
  warmup: boolean;
  /** Which measured round a client job is (0-based); stamped on its result. */
  round?: number;
}

interface Waiter {
  done: (job: TrackedJob) => boolean;
  resolve: () => void;
  reject: (err: Error) => void;
}

interface TrackedJob {
  meta: JobMeta;
  states: Set<JobState>;
  lastEvent: JobEvent | undefined;
  result: JobResult | undefined;
  /** A result is queued for its transaction (a second one is refused meanwhile). */
  resultQueued: boolean;
  failure: Error | undefined;
  waiters: Set<Waiter>;
}

const KNOWN_CODES = new Set<string>(Object.values(ErrorCodes));

function failureOf(ev: JobEvent, meta: JobMeta): Error {
  const code = (KNOWN_CODES.has(ev.errorCode) ? ev.errorCode : ErrorCodes.TOOL_FAILED) as ErrorCode;
  return new CniBenchError(code, `agent ${meta.agentId}: ${ev.message || 'job failed'}`, {
    details: { agent: meta.agentId, jobId: meta.jobId },
  });
}

export class JobTracker {
  private readonly jobs = new Map<string, TrackedJob>();
  /** Sampling job id -> resolver, for one-shot boundary samples. */
  private readonly sampleWaiters = new Map<string, (sample: DataplaneSample) => void>();

  constructor(private readonly queue: WriteQueue) {
    // The store cannot keep what agents send (a full disk): every job awaited fails now with that one line,
    // rather than at its timeout.
    queue.on('failed', (err) => this.failAll(err));
  }

  private failAll(err: Error): void {
    for (const job of this.jobs.values()) {
      if (job.failure) continue;
      job.failure = err;
      this.check(job);
    }
  }

  /** Agents with jobs, by run (for the sample check). */
  private readonly runAgents = new Map<string, Map<string, number>>();

  expect(meta: JobMeta): void {
    if (this.jobs.has(meta.jobId)) this.forget(meta.jobId);
    this.jobs.set(meta.jobId, {
      meta,
      states: new Set(),
      lastEvent: undefined,
      result: undefined,
      resultQueued: false,
      failure: undefined,
      waiters: new Set(),
    });
    const agents = this.runAgents.get(meta.runId) ?? new Map<string, number>();
    agents.set(meta.agentId, (agents.get(meta.agentId) ?? 0) + 1);
    this.runAgents.set(meta.runId, agents);
  }

  forget(jobId: string): void {
    const job = this.jobs.get(jobId);
    if (!job) return;
    this.jobs.delete(jobId);
    const agents = this.runAgents.get(job.meta.runId);
    const n = (agents?.get(job.meta.agentId) ?? 1) - 1;
    if (n > 0) agents?.set(job.meta.agentId, n);
    else agents?.delete(job.meta.agentId);
    if (agents && agents.size === 0) this.runAgents.delete(job.meta.runId);
  }

  /**
   * Whether `agentId` has a job in live run `runId`: only then are its samples
   * for that run stored. Jobs are forgotten when their run's cleanup ends.
   */
  private agentInRun(agentId: string, runId: string): boolean {
    return this.runAgents.get(runId)?.has(agentId) ?? false;
  }

  /** The tracked job `jobId` when `agentId` owns it and it belongs to `runId`; otherwise undefined. */
  private ownJob(agentId: string, jobId: string, runId: string): TrackedJob | undefined {
    const job = this.jobs.get(jobId);
    return job && job.meta.agentId === agentId && job.meta.runId === runId ? job : undefined;
  }

  /**
   * Handles one new (deduplicated) sequenced message from an authenticated
   * agent. Stores a result only for a job that agent owns in a run still
   * executing, a sample only for a run that agent takes part in; anything else
   * is refused (undefined) and never stored. Otherwise the promise resolves once
   * the message has committed and taken effect (rejects when its transaction
   * fails: the message must not be acknowledged).
   */
  onMessage(agentId: string, msg: AgentMessage): Promise<void> | undefined {
    const body = msg.body;
    if (!body) return undefined;
    if (body.$case === 'sample') {
      const sample = body.value;
      if (!this.agentInRun(agentId, sample.runId)) return undefined;
      return this.queue.addSample({ runId: sample.runId, agentId, sample }).then(() => {
        if (this.ownJob(agentId, sample.samplingJobId, sample.runId))
          this.sampleWaiters.get(sample.samplingJobId)?.(sample);
      });
    }
    if (body.$case === 'result') {
      const result = body.value;
      const job = this.ownJob(agentId, result.jobId, result.runId);
      if (!job || job.result || job.resultQueued) return undefined;
      if (job.meta.round !== undefined) result.round = job.meta.round;
      job.resultQueued = true;
      return this.queue
        .addResult({ runId: result.runId, phaseIndex: job.meta.phaseIndex, agentId, warmup: job.meta.warmup, result })
        .then(
          () => {
            job.result = result;
            this.check(job);
          },
          (err: unknown) => {
            job.resultQueued = false;
            throw err;
          },
        );
    }
    if (body.$case === 'jobEvent') {
      const ev = body.value;
      const job = this.ownJob(agentId, ev.jobId, ev.runId);
      if (!job) return undefined;
      // After what the agent sent before it (its result) has committed and taken effect.
      return this.queue.barrier().then(() => {
        job.states.add(ev.state);
        job.lastEvent = ev;
        if (ev.state === JobState.JOB_STATE_FAILED) job.failure = failureOf(ev, job.meta);
        if (ev.state === JobState.JOB_STATE_CANCELLED) {
          job.failure ??= new CniBenchError(ErrorCodes.CANCELLED, `agent ${agentId}: job ${job.meta.jobId} cancelled`);
        }
        this.check(job);
      });
    }
    return undefined;
  }

  /** Fails every job of a lost agent. */
  agentLost(agentId: string): void {
    for (const job of this.jobs.values()) {
      if (job.meta.agentId === agentId && !job.failure) {
        job.failure = new CniBenchError(ErrorCodes.AGENT_LOST, `agent ${agentId} stopped reporting`, {
          details: { agent: agentId },
        });
        this.check(job);
      }
    }
  }

  /**
   * Resolves with the sample of one-shot sampling job `jobId` once stored,
   * undefined on timeout (the report then has no boundary for that phase).
   */
  waitForSample(jobId: string, timeoutMs: number): Promise<DataplaneSample | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sampleWaiters.delete(jobId);
        resolve(undefined);
      }, timeoutMs);
      this.sampleWaiters.set(jobId, (sample) => {
        clearTimeout(timer);
        this.sampleWaiters.delete(jobId);
        resolve(sample);
      });
    });
  }

  waitForState(jobId: string, state: JobState, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.wait(jobId, (j) => j.states.has(state), `state ${JobState[state]}`, timeoutMs, signal);
  }

  async waitForResult(jobId: string, timeoutMs: number, signal?: AbortSignal): Promise<JobResult> {
    await this.wait(jobId, (j) => j.result !== undefined, 'a result', timeoutMs, signal);
    const r = this.jobs.get(jobId)?.result;
    if (!r) throw new CniBenchError(ErrorCodes.INTERNAL, `job ${jobId} lost its result`);
    return r;
  }

  private wait(
    jobId: string,
    done: (j: TrackedJob) => boolean,
    what: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const job = this.jobs.get(jobId);
    if (!job) return Promise.reject(new CniBenchError(ErrorCodes.INTERNAL, `job ${jobId} is not tracked`));
    return new Promise<void>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        job.waiters.delete(waiter);
      };
      const waiter: Waiter = {
        done,
        resolve: () => {
          cleanup();
          resolve();
        },
        reject: (err) => {
          cleanup();
          reject(err);
        },
      };
      const onAbort = (): void =>
        waiter.reject(new CniBenchError(ErrorCodes.CANCELLED, `cancelled while waiting for ${what} of job ${jobId}`));
      const timer = setTimeout(
        () =>
          waiter.reject(
            new CniBenchError(
              ErrorCodes.TIMEOUT,
              `job ${jobId} on ${job.meta.agentId}: no ${what} within ${timeoutMs} ms`,
            ),
          ),
        timeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      job.waiters.add(waiter);
      if (signal?.aborted) onAbort();
      else this.check(job);
    });
  }

  private check(job: TrackedJob): void {
    for (const w of [...job.waiters]) {
      if (w.done(job)) w.resolve();
      else if (job.failure) w.reject(job.failure);
      else if (job.states.has(JobState.JOB_STATE_SUCCEEDED)) {
        w.reject(new CniBenchError(ErrorCodes.INTERNAL, `job ${job.meta.jobId} ended without what was awaited`));
      }
    }
  }
}
