/**
 * Policy verification through the run's agents (core/conditions.ts
 * ConditionProbes), for collectors that cannot reach into pods themselves (a
 * cluster): the listener is the built-in tcp-echo server on the server's
 * agent, and a probe is the built-in tcp-rr client in TCP_CRR mode for the
 * probe's timeout from the probing agent. A probe that completed a
 * transaction connected; one whose client never connected was blocked, and
 * the client's error codes say how (ECONNREFUSED: refused; unreachable; else
 * a drop, seen as a timeout).
 */
import type { ConditionProbes } from '../../core/conditions.js';
import { asCniBenchError, ErrorCodes } from '../../core/errors.js';
import type { ProbeEnd, ProbeOutcome } from '../../core/policy-verify.js';
import { JobState } from '../../gen/cnibench/v1/agent.js';
import type { AgentEntry, AgentRegistry } from '../agents/registry.js';
import type { JobTracker } from './job-tracker.js';
import { type JobSender, type RunContext, runAgents } from './run-context.js';

const READY_TIMEOUT_MS = 20_000;
/** The client process starts (a Node process on the agent) and reports back: allowed on top of the probe's own time. */
const PROBE_SLACK_MS = 30_000;
/** A Hubble reading asks the cilium-agent's API and the observer (5 s and 10 s deadlines on the agent). */
const HUBBLE_READING_TIMEOUT_MS = 30_000;

/** Pure: how a failed probe client was blocked, from the job's error message (tcp-rr's errors by code). */
export function blockedOutcome(message: string): ProbeOutcome {
  if (/ECONNREFUSED/.test(message)) return 'refused';
  if (/EHOSTUNREACH|ENETUNREACH|EACCES|EPERM/.test(message)) return 'unreachable';
  return 'timeout';
}

export function agentProbes(
  ctx: RunContext,
  sender: JobSender,
  tracker: JobTracker,
  registry: AgentRegistry,
): ConditionProbes {
  const inRun = runAgents(ctx.plan);
  const end = (a: AgentEntry): ProbeEnd => ({ ns: a.id, name: a.info.podName || a.id });
  const clients = [ctx.plan.client, ...(ctx.plan.peer ? [ctx.plan.peer] : [])].filter((a) => a !== ctx.plan.server);
  /** A built-in server in the server agent's pod, ready before it returns; stop() cancels its job. */
  const serve = async (tool: string, port: number, signal?: AbortSignal) => {
    const jobId = sender.send(ctx, ctx.plan.server, {
      $case: 'startServer',
      value: { tool, port, hostNetwork: false },
    });
    await tracker.waitForState(jobId, JobState.JOB_STATE_READY, READY_TIMEOUT_MS, signal);
    return {
      stop: async () => {
        registry.send(ctx.plan.server.id, {
          body: {
            $case: 'job',
            value: {
              jobId: `${jobId}-stop`,
              runId: ctx.runId,
              kind: { $case: 'cancel', value: { jobId, runId: ctx.runId } },
            },
          },
        });
      },
    };
  };
  return {
    allowed: [...new Set(clients)].map(end),
    others: registry
      .available()
      .filter((a) => !inRun.some((r) => r.id === a.id))
      .map(end),
    listen: (port, signal) => serve('tcp-echo', port, signal),
    listenHttp: (port, signal) => serve('http-echo', port, signal),
    async httpGet(from, ip, port, path, seconds) {
      const agent = registry.available().find((a) => a.id === from.ns);
      if (!agent) return { answered: 0, non2xx: 0, error: `agent ${from.name} is not connected` };
      // The built-in fixed-rate client, one connection per request, a few requests: every answer's status counted.
      const jobId = sender.send(ctx, agent, {
        $case: 'runClient',
        value: {
          tool: 'http-open-loop',
          targetHost: ip,
          targetPort: port,
          durationSeconds: seconds,
          startAtMs: 0,
          spec: { $case: 'http', value: { connections: 1, threads: 1, keepalive: false, path, qps: 5 } },
          hostNetwork: false,
        },
      });
      try {
        const r = await tracker.waitForResult(jobId, seconds * 1000 + PROBE_SLACK_MS);
        const m = r.measurement?.kind;
        if (m?.$case !== 'http') return { answered: 0, non2xx: 0, error: 'no HTTP result' };
        const answered = Number(m.value.requests);
        const errors = m.value.socketErrors;
        return answered > 0
          ? { answered, non2xx: Number(m.value.non2xx) }
          : { answered: 0, non2xx: 0, error: `no answer (socket errors ${JSON.stringify(errors ?? {})})` };
      } catch (err) {
        const e = asCniBenchError(err);
        if (e.code === ErrorCodes.AGENT_LOST || e.code === ErrorCodes.STORE || e.code === ErrorCodes.CANCELLED) throw e;
        return { answered: 0, non2xx: 0, error: e.message };
      } finally {
        tracker.forget(jobId);
      }
    },
    async probe(from, ip, port, timeoutMs) {
      const agent = registry.available().find((a) => a.id === from.ns);
      if (!agent) return 'unreachable';
      const jobId = sender.send(ctx, agent, {
        $case: 'runClient',
        value: {
          tool: 'tcp-rr',
          targetHost: ip,
          targetPort: port,
          durationSeconds: timeoutMs / 1000,
          startAtMs: 0,
          spec: {
            $case: 'rr',
            value: { connectPerTransaction: true, connections: 1, requestBytes: 1, responseBytes: 1 },
          },
          hostNetwork: false,
        },
      });
      try {
        const r = await tracker.waitForResult(jobId, timeoutMs + PROBE_SLACK_MS);
        const m = r.measurement?.kind;
        return m?.$case === 'rr' && m.value.transactions > 0 ? 'connected' : 'timeout';
      } catch (err) {
        const e = asCniBenchError(err);
        if (e.code === ErrorCodes.AGENT_LOST || e.code === ErrorCodes.STORE || e.code === ErrorCodes.CANCELLED) throw e;
        return blockedOutcome(e.message);
      } finally {
        tracker.forget(jobId);
      }
    },
    async hubble(flowsTo, flows) {
      return Promise.all(
        registry.available().map(async (a) => {
          const reading = await sender.hubbleReading(ctx, a, { flowsTo, flows }, HUBBLE_READING_TIMEOUT_MS);
          return { agent: end(a).name, server: a.id === ctx.plan.server.id, reading };
        }),
      );
    },
  };
}
