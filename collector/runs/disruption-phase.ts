/**
 * A disruption phase: a Service with two backends (tcp-echo in the server
 * agent's pod and in the peer agent's pod of the same node, where there is a
 * peer), the client agent's open-loop probe stream through it, and one event
 * (disruption-events.ts) fired `eventAtSeconds` after the stream's start while
 * it runs. What it records is the event's wall-clock time and what it did; the
 * report places it on the stream's own clock (report/disruption-report.ts).
 * The Service, the stopped server and a services-added event's Services are
 * undone at the phase's end (and by the run's cleanup if it fails); a
 * services-removed event's Services are created, and programmed, before the
 * stream starts.
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { ServiceEndpoint, ServiceFrontend } from '../../core/service-frontend.js';
import { sleep } from '../../core/sleep.js';
import { SERVER_PORTS } from '../../core/tools.js';
import { JobState } from '../../gen/cnibench/v1/agent.js';
import type { AgentEntry } from '../agents/registry.js';
import { fireEvent } from './disruption-events.js';
import type { JobTracker } from './job-tracker.js';
import { clientSpecOf, type MeasurePhase, type Placement, serverPortFor, serviceName } from './measure-phase.js';
import type { PlannedMeasurement } from './plan.js';
import type { JobSender, RunContext } from './run-context.js';
import { changesServiceCount } from './scenario.js';

const READY_TIMEOUT_MS = 20_000;
/** The client job starts this far ahead ... */
const START_LEAD_MS = 300;
/**
 * ... and its stream's first attempt this much later: the agent spawns a Node
 * process, which took 2 s on the shared 2-core machine; the stream then runs
 * on a schedule the collector knows, and the event lands where asked.
 */
const STREAM_LEAD_MS = 3000;
const RESULT_SLACK_MS = 45_000;
const SAMPLE_TIMEOUT_MS = 15_000;

type DisruptionMeasurement = Extract<PlannedMeasurement, { kind: 'disruption' }>;

export interface DisruptionRecord {
  event: string;
  /** Wall clock (collector) when the event was fired and when the control plane had taken it. */
  firedMs: number;
  doneMs: number;
  /** When the client's stream was told to send its first attempt. */
  streamStartAtMs: number;
  service: { ip: string; port: number; backends: string[] };
  /** What the event did (Services programmed in how long, the endpoint removed, the agent restarted). */
  did: Record<string, unknown>;
  /** The event failed: the stream ran on, the phase fails with this, the report shows both. */
  error?: string;
}

export class DisruptionPhase {
  constructor(
    private readonly sender: JobSender,
    private readonly tracker: JobTracker,
    private readonly services: ServiceFrontend | undefined,
    private readonly measure: MeasurePhase,
  ) {}

  async run(ctx: RunContext, index: number, m: DisruptionMeasurement, place: Placement): Promise<DisruptionRecord> {
    const services = this.services;
    if (!services)
      throw new CniBenchError(ErrorCodes.VALIDATION, 'a disruption phase needs a service frontend', {
        details: { field: 'path' },
      });
    const port = serverPortFor('service', (SERVER_PORTS[m.serverTool] as { port: number }).port);
    const { plan } = ctx;
    const backends: { agent: AgentEntry; endpoint: ServiceEndpoint; jobId: string; key: string }[] = [];
    for (const agent of [plan.server, ...(plan.peer ? [plan.peer] : [])]) {
      const key = `${agent === plan.server ? '' : 'peer:'}${m.serverTool}@pod:${port}`;
      const jobId = await this.sender.ensureServer(ctx, agent, { tool: m.serverTool, port, hostNetwork: false }, key);
      backends.push({ agent, endpoint: { ip: agent.info.podIp, port }, jobId, key });
    }
    const name = serviceName(`disruption-${index}`);
    if (m.event === 'services-removed') {
      // Marked first, so the run's cleanup removes them whatever happens.
      ctx.scaled = true;
      await (services.scale as NonNullable<ServiceFrontend['scale']>).setDummyServices(m.services, 1, ctx.runId);
    }
    const before = services.programmedLater
      ? await this.sender.sampleOnce(ctx, place.client, SAMPLE_TIMEOUT_MS).sample
      : undefined;
    const svc = await services.expose(
      name,
      port,
      backends.map((b) => b.endpoint),
    );
    // Recorded before any wait, so the run's cleanup removes it whatever happens.
    ctx.services.set(`disruption-${index}`, svc);
    const addresses = backends.map((b) => `${b.endpoint.ip}:${b.endpoint.port}`);
    if (services.programmedLater) await this.measure.untilProgrammed(ctx, place.client, before, svc, addresses);
    const startAt = Date.now() + START_LEAD_MS;
    const streamAt = startAt + STREAM_LEAD_MS;
    const jobId = this.sender.send(
      ctx,
      place.client,
      {
        $case: 'runClient',
        value: {
          tool: m.tool,
          targetHost: svc.ip,
          targetPort: svc.port,
          durationSeconds: m.durationSeconds,
          startAtMs: startAt,
          spec: withStreamStart(clientSpecOf(m), streamAt),
          hostNetwork: false,
        },
      },
      { phaseIndex: index, warmup: false, round: 0 },
    );
    const result = this.tracker.waitForResult(
      jobId,
      m.durationSeconds * 1000 + START_LEAD_MS + RESULT_SLACK_MS,
      ctx.signal,
    );
    result.catch(() => undefined);
    // Should the process start later than streamAt, the stream starts late; the report places the event on the stream's own clock.
    await this.tracker.waitForState(jobId, JobState.JOB_STATE_RUNNING, START_LEAD_MS + READY_TIMEOUT_MS, ctx.signal);
    await sleep(Math.max(0, streamAt + m.eventAtSeconds * 1000 - Date.now()), ctx.signal);
    const peer = backends[1];
    const firedMs = Date.now();
    const record: DisruptionRecord = {
      event: m.event,
      firedMs,
      doneMs: firedMs,
      streamStartAtMs: streamAt,
      service: { ip: svc.ip, port: svc.port, backends: addresses },
      did: {},
    };
    try {
      record.did = await fireEvent(m.event, m, {
        services,
        runId: ctx.runId,
        serviceName: name,
        kept: (backends[0] as (typeof backends)[number]).endpoint,
        ...(peer ? { removed: peer.endpoint } : {}),
        client: place.client,
        stopPeerServer: () => {
          if (!peer) return;
          this.sender.send(ctx, peer.agent, { $case: 'cancel', value: { jobId: peer.jobId, runId: '' } });
          ctx.servers.delete(peer.key);
        },
        markScaled: () => {
          ctx.scaled = true;
        },
        signal: ctx.signal,
      });
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      record.error = (err as Error).message;
    }
    record.doneMs = Date.now();
    try {
      await result;
    } finally {
      // A backend cut off by backend-link-down comes back whatever happened to the stream.
      if (m.event === 'backend-link-down') await this.restoreLinks();
    }
    await this.undo(ctx, m, name, index);
    return record;
  }

  /** The phase's Service and a services-added event's Services go; a stopped server is started again by the next phase that needs it. */
  private async undo(ctx: RunContext, m: DisruptionMeasurement, name: string, index: number): Promise<void> {
    await this.services?.remove(name);
    ctx.services.delete(`disruption-${index}`);
    if (changesServiceCount(m.event)) await this.services?.scale?.setDummyServices(0, 1, ctx.runId);
  }

  private async restoreLinks(): Promise<void> {
    const failed = (await this.services?.restoreEndpointLinks?.().catch((err: Error) => [err.message])) ?? [];
    if (failed.length)
      throw new CniBenchError(ErrorCodes.INTERNAL, `backend-link-down: links not restored: ${failed.join('; ')}`);
  }
}

function withStreamStart(spec: ReturnType<typeof clientSpecOf>, at: number): ReturnType<typeof clientSpecOf> {
  return spec?.$case === 'disruption' ? { $case: 'disruption', value: { ...spec.value, startAtMs: at } } : spec;
}
