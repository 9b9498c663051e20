/**
 * One measurement phase: places client and server for the measurement's path
 * (pod, same-node peer, Service, host network), starts the server and waits
 * until it listens, runs an unrecorded warm-up, then the measured rounds with
 * a pause between them. Each round's clients start at a time set in advance,
 * and each round is bracketed by a cheap sample of the server's CPU, so the
 * server-saturation guard sees exactly the measured window. A new Service whose
 * frontend programs it later (a cluster's kube-proxy) is waited for on the
 * client's node, by its samples, before anything is sent to it.
 */

import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { ServiceFrontend, SyncTarget } from '../../core/service-frontend.js';
import { sleep } from '../../core/sleep.js';
import { SERVER_DATA_PORTS, SERVER_PORTS } from '../../core/tools.js';
import type { DataplaneSample, RunClient } from '../../gen/cnibench/v1/agent.js';
import type { AgentEntry } from '../agents/registry.js';
import type { JobTracker } from './job-tracker.js';
import { clientAgentFor, type PlannedMeasurement, type RunPlan } from './plan.js';
import type { JobSender, RunContext } from './run-context.js';
import { checkSync, serviceSyncTarget } from './sync.js';

/** Clients are told to start this far in the future so they begin together. */
const START_LEAD_MS = 100;
const RESULT_SLACK_MS = 45_000;
const SERVER_SAMPLE_TIMEOUT_MS = 5_000;
/** How long a new Service may take to appear in the client node's dataplane (kube-proxy syncs within seconds). */
const SERVICE_SYNC_TIMEOUT_MS = 60_000;
const SERVICE_SYNC_SAMPLE_TIMEOUT_MS = 15_000;
const SERVICE_SYNC_POLL_PAUSE_MS = 200;

export interface Placement {
  client: AgentEntry;
  serverHostNetwork: boolean;
  clientHostNetwork: boolean;
}

/** Which agent runs the client and which ends use the host network, by path. Pure. */
export function placementOf(m: Pick<PlannedMeasurement, 'path'>, plan: Pick<RunPlan, 'client' | 'peer'>): Placement {
  const client = clientAgentFor(m, plan);
  if (!client) throw new CniBenchError(ErrorCodes.NO_AGENTS, `path '${m.path}': no peer agent on the server's node`);
  return {
    client,
    serverHostNetwork: m.path === 'host-to-host' || m.path === 'pod-to-host',
    clientHostNetwork: m.path === 'host-to-host',
  };
}

/** The client job's spec for a measurement. Pure. */
export function clientSpecOf(m: PlannedMeasurement): RunClient['spec'] {
  if (m.kind === 'throughput')
    return {
      $case: 'throughput',
      value: {
        streams: m.streams,
        protocol: m.protocol,
        targetBitsPerSecond: Math.round((m.udpTargetMbps ?? 0) * 1e6),
      },
    };
  if (m.kind === 'http') {
    return {
      $case: 'http',
      value: {
        connections: m.connections,
        threads: Math.min(m.threads, m.connections),
        keepalive: m.mode === 'keepalive',
        path: m.urlPath,
        qps: m.qps,
      },
    };
  }
  if (m.kind === 'disruption')
    return {
      $case: 'disruption',
      value: { rate: m.rate, keptConnections: m.keptConnections, timeoutMs: m.timeoutMs, binMs: 100, startAtMs: 0 },
    };
  return {
    $case: 'rr',
    value: {
      connectPerTransaction: m.mode === 'crr',
      connections: m.connections,
      requestBytes: m.requestBytes,
      responseBytes: m.responseBytes,
    },
  };
}

export interface Target {
  host: string;
  port: number;
  via: string;
  /** A new Service of a frontend that programs later: from expose() until the client's node showed it. */
  syncMs?: number;
  /** What the client's node had to show (KUBE-SERVICES length, service-ips elements, or Cilium's LB frontend with its backends). */
  syncTarget?: SyncTarget;
}

export interface RoundRecord {
  round: number;
  /** Servers-only sample jobs of the server's agent just before and after the round (the report finds them by id). */
  serverBefore: string;
  serverAfter: string;
  /** The same of the client's agent: its namespaces' TCP counters over the round. */
  clientBefore: string;
  clientAfter: string;
}

export class MeasurePhase {
  constructor(
    private readonly sender: JobSender,
    private readonly tracker: JobTracker,
    private readonly services: ServiceFrontend | undefined,
  ) {}

  /** Starts (once per run) the server and its Service; returns where the client aims. */
  async target(ctx: RunContext, m: PlannedMeasurement, place: Placement): Promise<Target> {
    const ports = SERVER_PORTS[m.serverTool];
    if (!ports) throw new CniBenchError(ErrorCodes.TOOL_UNKNOWN, `no server port known for '${m.serverTool}'`);
    const port = serverPortFor(m.path, ports.port);
    const hostNetwork = place.serverHostNetwork;
    await this.sender.ensureServer(
      ctx,
      ctx.plan.server,
      { tool: m.serverTool, port, hostNetwork },
      serverKey(m.serverTool, hostNetwork, port),
    );
    const server = ctx.plan.server.info;
    if (m.path === 'host-to-host' || m.path === 'pod-to-host') return { host: server.hostIp, port, via: 'host IP' };
    if (m.path !== 'service') return { host: server.podIp, port, via: 'pod IP' };
    if (!this.services)
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        `path 'service' needs a service frontend, and this collector has none`,
        { details: { field: 'path' } },
      );
    const via = `Service ${this.services.description}`;
    const known = ctx.services.get(m.serverTool);
    if (known) return { host: known.ip, port: known.port, via };
    // The client node's count just before, so the wait below knows what "one more" is.
    const before = this.services.programmedLater
      ? await this.sender.sampleOnce(ctx, place.client, SERVICE_SYNC_SAMPLE_TIMEOUT_MS).sample
      : undefined;
    // A server with a data port (netserver): the client names that port to the server and then connects to it
    // at the ClusterIP, so both of the Service's ports equal the backend's.
    const dataOffset =
      SERVER_DATA_PORTS[m.serverTool] === undefined
        ? undefined
        : (SERVER_DATA_PORTS[m.serverTool] as number) - ports.port;
    const servicePort = dataOffset === undefined ? ports.servicePort : port;
    const extra =
      dataOffset === undefined ? [] : [{ name: 'data', port: port + dataOffset, targetPort: port + dataOffset }];
    const svc = await this.services.expose(serviceName(m.serverTool), servicePort, [{ ip: server.podIp, port }], extra);
    // Recorded before any wait, so cleanup removes it whatever happens next.
    ctx.services.set(m.serverTool, svc);
    if (!this.services.programmedLater) return { host: svc.ip, port: svc.port, via };
    // The backend is the port exposed above (a Service path's server listens apart from the pod path's).
    const synced = await this.untilProgrammed(ctx, place.client, before, svc, [`${server.podIp}:${port}`]);
    return { host: svc.ip, port: svc.port, via, syncMs: synced.ms, syncTarget: synced.target };
  }

  /**
   * Samples the client's node until its dataplane has the Service, as a sweep
   * step is checked; never a fixed sleep. kube-proxy's forms are checked by
   * count (one Service more than `before`: KUBE-SERVICES rules, or service-ips
   * elements in nftables mode), as their samples carry no addresses; Cilium's
   * by the Service's own frontend holding its backends in the LB maps.
   */
  async untilProgrammed(
    ctx: RunContext,
    client: AgentEntry,
    before: DataplaneSample | undefined,
    svc: { ip: string; port: number },
    backends: string[],
  ): Promise<{ ms: number; target: SyncTarget }> {
    const address = `${svc.ip}:${svc.port}`;
    if (!before)
      throw new CniBenchError(
        ErrorCodes.TIMEOUT,
        `no dataplane sample from ${client.id} before exposing Service ${address}`,
      );
    const target = serviceSyncTarget(before, svc, backends);
    const began = Date.now();
    for (;;) {
      if (ctx.signal.aborted)
        throw new CniBenchError(ErrorCodes.CANCELLED, `cancelled while waiting for Service ${address} on ${client.id}`);
      const check = checkSync(await this.sender.sampleOnce(ctx, client, SERVICE_SYNC_SAMPLE_TIMEOUT_MS).sample, target);
      if (check.ok) return { ms: Date.now() - began, target };
      if (Date.now() - began > SERVICE_SYNC_TIMEOUT_MS) {
        throw new CniBenchError(
          ErrorCodes.TIMEOUT,
          `Service ${address} not in the dataplane of ${client.id} ${SERVICE_SYNC_TIMEOUT_MS / 1000} s after it was created (${check.why})`,
        );
      }
      await sleep(SERVICE_SYNC_POLL_PAUSE_MS, ctx.signal);
    }
  }

  /**
   * Warm-up (unrecorded) on the first use of a tool, mode, client and target
   * (and again at every sweep step), then every round; returns what each
   * round's brackets saw. A server's first seconds read low (the study saw
   * 20-25% on iperf3's first run); a second phase on the same server and path
   * (8 streams after 1) is already warm.
   */
  async rounds(
    ctx: RunContext,
    index: number,
    m: PlannedMeasurement,
    place: Placement,
    target: Target,
    step?: number,
  ): Promise<RoundRecord[]> {
    const key = warmupKey(m, place, target, step);
    if (m.warmupSeconds > 0 && !ctx.warmed.has(key)) {
      await this.client(ctx, index, m, place, target, m.warmupSeconds, { warmup: true });
      ctx.warmed.add(key);
    }
    const out: RoundRecord[] = [];
    for (let round = 0; round < m.rounds; round++) {
      if (round > 0 && ctx.scenario.roundSleepSeconds > 0)
        await sleep(ctx.scenario.roundSleepSeconds * 1000, ctx.signal);
      if (ctx.signal.aborted) throw new CniBenchError(ErrorCodes.CANCELLED, 'cancelled between rounds');
      const before = this.bracket(ctx, place);
      await Promise.all([before.server.sample, before.client.sample]);
      await this.client(ctx, index, m, place, target, m.durationSeconds, { round });
      const after = this.bracket(ctx, place);
      await Promise.all([after.server.sample, after.client.sample]);
      out.push({
        round,
        serverBefore: before.server.jobId,
        serverAfter: after.server.jobId,
        clientBefore: before.client.jobId,
        clientAfter: after.client.jobId,
      });
    }
    return out;
  }

  /** Servers-only samples of both ends (server CPU, both namespaces' TCP counters), taken together. */
  private bracket(
    ctx: RunContext,
    place: Placement,
  ): { server: ReturnType<JobSender['sampleOnce']>; client: ReturnType<JobSender['sampleOnce']> } {
    return {
      server: this.sender.sampleOnce(ctx, ctx.plan.server, SERVER_SAMPLE_TIMEOUT_MS, true),
      client: this.sender.sampleOnce(ctx, place.client, SERVER_SAMPLE_TIMEOUT_MS, true),
    };
  }

  private async client(
    ctx: RunContext,
    index: number,
    m: PlannedMeasurement,
    place: Placement,
    target: Target,
    seconds: number,
    meta: { warmup?: boolean; round?: number },
  ): Promise<void> {
    const value: RunClient = {
      tool: m.tool,
      targetHost: target.host,
      targetPort: target.port,
      durationSeconds: seconds,
      startAtMs: Date.now() + START_LEAD_MS,
      spec: clientSpecOf(m),
      hostNetwork: place.clientHostNetwork,
      // A ClusterIP answers no ping: the path MTU of a Service path is its backend's (agent/observe/pmtu.ts).
      ...(m.path === 'service' ? { pathMtuTarget: ctx.plan.server.info.podIp } : {}),
    };
    const jobId = this.sender.send(
      ctx,
      place.client,
      { $case: 'runClient', value },
      { phaseIndex: index, warmup: meta.warmup ?? false, ...(meta.round !== undefined ? { round: meta.round } : {}) },
    );
    await this.tracker.waitForResult(jobId, seconds * 1000 + START_LEAD_MS + RESULT_SLACK_MS, ctx.signal);
  }
}

/**
 * Server ports behind a Service are the tool's port plus this: a server port is
 * reached through one destination only. When one client reached the same
 * server port both at the pod IP and through the ClusterIP, the server saw the
 * same 4-tuples with two timestamp clocks (the client's TCP timestamp offset
 * follows the destination address it connects to), its TIME_WAIT sockets from
 * the earlier phase refused the later phase's SYNs (TcpExtPAWSTimewait), and
 * every refused SYN cost a one-second retransmission; waiting it out takes
 * more than 65 s (TIME_WAIT plus timer slack). See
 * docs/findings/service-short-connection-artifact.md.
 */
export const SERVICE_BACKEND_PORT_OFFSET = 100;

/** The port a measurement's server listens on: its own for direct paths, offset behind a Service. Pure. */
export function serverPortFor(path: PlannedMeasurement['path'], port: number): number {
  return path === 'service' ? port + SERVICE_BACKEND_PORT_OFFSET : port;
}

/** What a warm-up warms: a tool in one mode from one client to one target, at one sweep step. Pure. */
export function warmupKey(
  m: PlannedMeasurement,
  place: Pick<Placement, 'client' | 'clientHostNetwork'>,
  target: Pick<Target, 'host' | 'port'>,
  step?: number,
): string {
  // TCP_RR warms the server and path for TCP_CRR (netperf's CRR spends 4 s past its duration on every run: warm it once).
  const mode = m.kind === 'throughput' ? m.protocol : m.kind === 'http' ? `${m.mode}${m.qps > 0 ? '-qps' : ''}` : 'rr';
  return [
    m.kind,
    m.tool,
    mode,
    place.client.id,
    place.clientHostNetwork ? 'host' : 'pod',
    `${target.host}:${target.port}`,
    step ?? '',
  ].join('|');
}

/** One Service per server tool, under a stable name (runs are exclusive, see RunsApi.create). */
export function serviceName(tool: string): string {
  return `cni-bench-${tool}`;
}

function serverKey(tool: string, hostNetwork: boolean, port: number): string {
  return `${tool}@${hostNetwork ? 'host' : 'pod'}:${port}`;
}
