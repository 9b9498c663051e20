/**
 * Executes the collector's jobs on this node and reports every state change,
 * result and sample through the Outbox. Each job owns an AbortController; cancel
 * aborts it, and core/process.ts kills the job's process group.
 */
import { cpus } from 'node:os';
import { asCniBenchError, CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { netnsArgv, netnsAt } from '../../core/netns.js';
import { run, spawnLongRunning } from '../../core/process.js';
import { sleep } from '../../core/sleep.js';
import { executableOf, findTool } from '../../core/tool-catalogue/index.js';
import { VERSION } from '../../core/version.js';
import {
  type ClientObservation,
  DataplaneSample,
  type HubbleQuery,
  type Job,
  JobState,
  type Measurement,
  type PathMtu,
  type RunClient,
  type ServerUsage,
  type StartServer,
} from '../../gen/cnibench/v1/agent.js';
import type { ClientSpec } from '../drivers/driver.js';
import { clientDrivers, serverDrivers } from '../drivers/registry.js';
import { startClientObserver } from '../observe/client-observer.js';
import { measurePathMtu } from '../observe/pmtu.js';
import { readTreeUsage } from '../observe/process-tree.js';
import type { Outbox } from '../outbox.js';
import { waitForListen } from '../readiness.js';
import { type DataplaneSampler, readLoadAverage } from '../samplers/dataplane-sampler.js';

const RAW_OUTPUT_LIMIT = 64 * 1024;
const SERVER_READY_TIMEOUT_MS = 10_000;
/** Slack on top of the requested duration before a client is killed. */
const CLIENT_GRACE_MS = 30_000;

interface Active {
  runId: string;
  abort: AbortController;
}

export interface JobRunnerDeps {
  outbox: Outbox;
  log: Logger;
  /** Installed binaries by name -> version (tools sharing a binary, like fortio's two modes, share it). */
  toolVersion: (binary: string) => string | undefined;
  sampler: DataplaneSampler;
  /** The node's network namespace, entered for host-network servers and clients ('' = the agent's own). */
  hostNetns: string;
  /** CPUs the agent's tools may use. */
  cpus: number;
  /** This node's name, carried by Hubble readings. */
  nodeName?: string;
}

interface RunningServer {
  tool: string;
  pid: number;
}

export class JobRunner {
  private readonly active = new Map<string, Active>();
  private readonly servers = new Map<string, RunningServer>();
  /** Path MTU per run, namespace and target: measured once per run, after the first round's tool. */
  private readonly pathMtus = new Map<string, { runId: string; mtu: Promise<PathMtu> }>();

  constructor(private readonly deps: JobRunnerDeps) {}

  get running(): number {
    return this.active.size;
  }

  activeRunIds(): string[] {
    return [...new Set([...this.active.values()].map((a) => a.runId))];
  }

  handle(job: Job): void {
    const kind = job.kind;
    if (!kind) return this.event(job, JobState.JOB_STATE_FAILED, 'job has no kind', ErrorCodes.VALIDATION);
    if (kind.$case === 'cancel') return this.cancel(kind.value.jobId, kind.value.runId);
    if (kind.$case === 'stopSampling') return this.cancel(kind.value.samplingJobId, '');
    if (this.active.has(job.jobId)) return; // Redelivered after a reconnect: already running.
    const entry: Active = { runId: job.runId, abort: new AbortController() };
    this.active.set(job.jobId, entry);
    this.event(job, JobState.JOB_STATE_ACCEPTED, '');
    const signal = entry.abort.signal;
    const work =
      kind.$case === 'startServer'
        ? this.startServer(job, kind.value, signal)
        : kind.$case === 'runClient'
          ? this.runClient(job, kind.value, signal)
          : kind.$case === 'sampleOnce'
            ? kind.value.hubble
              ? this.sampleHubble(job, kind.value.hubble)
              : kind.value.serversOnly
                ? this.sampleServers(job)
                : this.sampleOnce(job, signal)
            : this.sample(job, kind.value.intervalMs, signal);
    work
      .then(() =>
        this.event(job, entry.abort.signal.aborted ? JobState.JOB_STATE_CANCELLED : JobState.JOB_STATE_SUCCEEDED, ''),
      )
      .catch((err: unknown) => {
        const e = asCniBenchError(err);
        if (e.code === ErrorCodes.CANCELLED || entry.abort.signal.aborted)
          this.event(job, JobState.JOB_STATE_CANCELLED, e.message);
        else this.event(job, JobState.JOB_STATE_FAILED, e.message, e.code);
      })
      .finally(() => this.active.delete(job.jobId));
  }

  /** Aborts every job (agent shutdown). */
  cancelAll(): void {
    for (const a of this.active.values()) a.abort.abort();
  }

  private cancel(jobId: string, runId: string): void {
    for (const [id, a] of this.active) {
      if ((jobId && id === jobId) || (!jobId && runId && a.runId === runId)) a.abort.abort();
    }
  }

  private event(job: Job, state: JobState, message: string, errorCode = ''): void {
    this.deps.outbox.push({
      $case: 'jobEvent',
      value: { jobId: job.jobId, runId: job.runId, state, message, errorCode, timeMs: Date.now() },
    });
    if (state === JobState.JOB_STATE_FAILED) this.deps.log.warn('job failed', { jobId: job.jobId, message, errorCode });
  }

  /** The executable that runs `tool` here, and the version reports print; E_TOOL_MISSING when the node lacks its binary. */
  private requireTool(tool: string): { executable: string; version: string } {
    const facts = findTool(tool);
    // A built-in is part of the agent: its version is the agent's, labelled so reports tell it from a native tool.
    const version = !facts
      ? undefined
      : facts.binary
        ? this.deps.toolVersion(facts.binary.binary)
        : `built-in ${VERSION}`;
    if (!facts || version === undefined) {
      throw new CniBenchError(ErrorCodes.TOOL_MISSING, `tool '${tool}' is not installed on this node`, {
        details: { tool },
      });
    }
    return { executable: executableOf(facts), version };
  }

  private async startServer(job: Job, spec: StartServer, signal: AbortSignal): Promise<void> {
    const driver = serverDrivers.get(spec.tool);
    if (!driver)
      throw new CniBenchError(ErrorCodes.TOOL_UNKNOWN, `unknown server tool '${spec.tool}'`, {
        details: { tool: spec.tool },
      });
    const { executable } = this.requireTool(spec.tool);
    const [file, args] = this.where(spec.hostNetwork, executable, driver.buildServerArgs({ port: spec.port }));
    const proc = spawnLongRunning(file, args, { signal, tool: spec.tool });
    if (proc.pid !== undefined) this.servers.set(job.jobId, { tool: spec.tool, pid: proc.pid });
    void proc.exited.finally(() => this.servers.delete(job.jobId)).catch(() => undefined);
    try {
      // nsenter execs the server in place, so its pid's /proc/<pid>/net shows the namespace it listens in.
      await waitForListen(spec.port, {
        timeoutMs: SERVER_READY_TIMEOUT_MS,
        signal,
        exited: proc.exited,
        ...(proc.pid !== undefined ? { pid: proc.pid } : {}),
      });
    } catch (err) {
      const r = await proc.stop();
      const why = (r.stderr || r.stdout).trim().slice(0, 300);
      throw new CniBenchError(
        asCniBenchError(err).code,
        `${spec.tool} server: ${asCniBenchError(err).message}${why ? `: ${why}` : ''}`,
        { cause: err },
      );
    }
    this.event(job, JobState.JOB_STATE_READY, `${spec.tool} listening on ${spec.port}`);
    const r = await proc.exited;
    if (!signal.aborted) {
      throw new CniBenchError(
        ErrorCodes.TOOL_FAILED,
        `${spec.tool} server exited unexpectedly (${r.exitCode}): ${r.stderr.trim().slice(0, 300)}`,
      );
    }
  }

  private async runClient(job: Job, spec: RunClient, signal: AbortSignal): Promise<void> {
    const driver = clientDrivers.get(spec.tool);
    if (!driver)
      throw new CniBenchError(ErrorCodes.TOOL_UNKNOWN, `unknown client tool '${spec.tool}'`, {
        details: { tool: spec.tool },
      });
    const { executable, version } = this.requireTool(spec.tool);
    const cs: ClientSpec = {
      targetHost: spec.targetHost,
      targetPort: spec.targetPort,
      durationSeconds: spec.durationSeconds,
      ...clientSpecFields(spec.spec),
    };
    const [file, args] = this.where(spec.hostNetwork, executable, driver.buildClientArgs(cs));
    const threads = driver.cpuThreads?.(cs) ?? 1;
    const wait = spec.startAtMs - Date.now();
    if (wait > 0) await sleep(wait, signal);
    if (signal.aborted) throw new CniBenchError(ErrorCodes.CANCELLED, 'cancelled before start');
    this.event(job, JobState.JOB_STATE_RUNNING, '');
    const started = Date.now();
    let observer: ReturnType<typeof startClientObserver> | undefined;
    let seen: Awaited<ReturnType<ReturnType<typeof startClientObserver>['stop']>> | undefined;
    let r: Awaited<ReturnType<typeof run>>;
    try {
      r = await run(file, args, {
        tool: spec.tool,
        signal,
        timeoutMs: spec.durationSeconds * 1000 + CLIENT_GRACE_MS,
        okExitCodes: driver.okExitCodes ?? [0],
        onSpawn: (pid) => {
          observer = startClientObserver({
            pid,
            threads: Number.isFinite(threads) ? threads : this.deps.cpus,
            cpus: this.deps.cpus,
            targetHost: spec.targetHost,
            ...(spec.hostNetwork && this.deps.hostNetns ? { netnsPath: this.deps.hostNetns } : {}),
          });
        },
      });
    } finally {
      // Stopped on every path (stop never rejects), so its poll timer never outlives the tool.
      seen = await observer?.stop();
    }
    for (const note of seen?.notes ?? []) this.deps.log.debug('client observer', { jobId: job.jobId, note });
    let measurement: Measurement;
    try {
      measurement = driver.parse(r.stdout, cs);
    } catch (err) {
      const e = asCniBenchError(err);
      const stderr = r.stderr.trim();
      throw stderr
        ? new CniBenchError(e.code, `${e.message}; stderr: ${stderr.slice(0, 300)}`, {
            cause: err,
            details: { ...e.details },
          })
        : e;
    }
    if (measurement.kind?.$case === 'http') measurement.kind.value.keepalive = cs.keepalive ?? true;
    const pathMtu = measurement.kind?.$case === 'disruption' ? undefined : await this.pathMtu(job.runId, spec);
    this.deps.outbox.push({
      $case: 'result',
      value: {
        jobId: job.jobId,
        runId: job.runId,
        tool: spec.tool,
        toolVersion: version,
        measurement,
        rawOutput: r.stdout.slice(0, RAW_OUTPUT_LIMIT),
        startedMs: started,
        endedMs: Date.now(),
        warnings: [],
        observation: seen?.observation as ClientObservation | undefined,
        round: 0,
        pathMtu,
      },
    });
  }

  /**
   * The path MTU toward the client's target, from where the client ran: after
   * the tool, so its probes never share the wire with a measurement, and once
   * per run and target (a black hole costs seconds of silent probes).
   */
  private pathMtu(runId: string, spec: RunClient): Promise<PathMtu> {
    const ns = spec.hostNetwork ? this.deps.hostNetns : '';
    const target = spec.pathMtuTarget || spec.targetHost;
    const key = `${runId}\u0000${ns}\u0000${target}`;
    const live = new Set(this.activeRunIds());
    for (const [k, v] of this.pathMtus) if (!live.has(v.runId)) this.pathMtus.delete(k);
    let entry = this.pathMtus.get(key);
    if (!entry) {
      entry = { runId, mtu: measurePathMtu(ns, target) };
      this.pathMtus.set(key, entry);
    }
    return entry.mtu;
  }

  /** One sample now; a one-shot (boundary, sync) reads rules afresh, a periodic one when due. */
  private async sampleOnce(job: Job, signal: AbortSignal, fresh = true): Promise<void> {
    const s = await this.deps.sampler.sample(signal, { fresh });
    const servers = await this.serverUsage();
    if (!signal.aborted)
      this.deps.outbox.push({ $case: 'sample', value: { ...s, servers, runId: job.runId, samplingJobId: job.jobId } });
  }

  /**
   * A Hubble reading only (a Hubble condition's verification). The reader and
   * its gRPC observer client load on the first such job, never before: an agent
   * no collector asks keeps its monitoring-mode footprint.
   */
  private async sampleHubble(job: Job, q: HubbleQuery): Promise<void> {
    const notFound: string[] = [];
    const agent = await this.deps.sampler.ciliumAgent(notFound).catch((err: unknown) => {
      notFound.push(asCniBenchError(err).message);
      return undefined;
    });
    const { readHubble } = await import('../observe/hubble-reader.js');
    const hubble = await readHubble(this.deps.nodeName ?? '', agent, q, notFound);
    this.deps.outbox.push({
      $case: 'sample',
      value: DataplaneSample.fromPartial({
        hubble,
        timeMs: Date.now(),
        runId: job.runId,
        samplingJobId: job.jobId,
        notes: ['hubble reading only'],
      }),
    });
  }

  /** A sample of only the servers' CPU: cheap enough to bracket every round. */
  private async sampleServers(job: Job): Promise<void> {
    const errors: string[] = [];
    const [servers, tcpCounters, loadAverage, kernelCpu] = await Promise.all([
      this.serverUsage(),
      this.deps.sampler.tcpCounters(errors),
      readLoadAverage().catch(() => 0),
      this.deps.sampler.kernelCpu(errors),
    ]);
    this.deps.outbox.push({
      $case: 'sample',
      value: DataplaneSample.fromPartial({
        servers,
        tcpCounters,
        loadAverage,
        ...(kernelCpu ? { kernelCpu } : {}),
        machineCpus: cpus().length,
        errors,
        serversOnly: true,
        timeMs: Date.now(),
        runId: job.runId,
        samplingJobId: job.jobId,
        notes: ['servers only'],
      }),
    });
  }

  private async serverUsage(): Promise<ServerUsage[]> {
    const out: ServerUsage[] = [];
    for (const [jobId, s] of this.servers) {
      const u = await readTreeUsage(s.pid).catch(() => undefined);
      if (u) out.push({ tool: s.tool, jobId, pid: s.pid, cpuSeconds: u.cpuSeconds, rssBytes: u.rssBytes });
    }
    return out;
  }

  /** The argv that runs a tool in the host network namespace when asked (and one is configured), else in the agent's. */
  private where(hostNetwork: boolean, file: string, args: string[]): [string, string[]] {
    if (hostNetwork && !this.deps.hostNetns) {
      throw new CniBenchError(ErrorCodes.VALIDATION, 'host network: this agent has no --host-netns configured', {
        details: { field: 'hostNetns' },
      });
    }
    return netnsArgv(hostNetwork ? netnsAt(this.deps.hostNetns) : undefined, file, args);
  }

  private async sample(job: Job, intervalMs: number, signal: AbortSignal): Promise<void> {
    const every = Math.max(100, intervalMs || 1000);
    while (!signal.aborted) {
      await this.sampleOnce(job, signal, false);
      await sleep(every, signal);
    }
  }
}

/** The driver-facing fields of a client job's spec. */
function clientSpecFields(spec: RunClient['spec']): Partial<ClientSpec> {
  if (spec?.$case === 'throughput') {
    return {
      streams: spec.value.streams,
      protocol: spec.value.protocol === 'udp' ? 'udp' : 'tcp',
      targetBitsPerSecond: spec.value.targetBitsPerSecond,
    };
  }
  if (spec?.$case === 'http') {
    const v = spec.value;
    return { connections: v.connections, threads: v.threads, keepalive: v.keepalive, path: v.path || '/', qps: v.qps };
  }
  if (spec?.$case === 'rr') {
    const v = spec.value;
    return {
      connections: v.connections || 1,
      connectPerTransaction: v.connectPerTransaction,
      requestBytes: v.requestBytes || 1,
      responseBytes: v.responseBytes || 1,
    };
  }
  if (spec?.$case === 'disruption') {
    const v = spec.value;
    return {
      rate: v.rate,
      keptConnections: v.keptConnections,
      timeoutMs: v.timeoutMs,
      binMs: v.binMs,
      streamStartAtMs: v.startAtMs,
    };
  }
  return {};
}
