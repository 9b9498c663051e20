/**
 * The collector's AgentService: Register and the Session stream. It never binds
 * a port; main adds it to a server. Every call is tied to the caller's identity
 * (call-auth.ts): a node is spoken for only by its own identity, a session only
 * by the instance that registered it. Every sequenced message is checked
 * (sequence window, job and run ownership) and stored before it is
 * acknowledged, so an agent only forgets what the collector has kept.
 */
import type { Server, ServerDuplexStream, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import {
  AgentMessage,
  AgentServiceService,
  type CollectorMessage,
  type MonitorReport,
  RegisterRequest,
  type RegisterResponse,
} from '../../gen/cnibench/v1/agent.js';
import type { AgentRegistry } from '../agents/registry.js';
import type { Authenticator, Principal } from '../auth/principal.js';
import type { CollectorMetrics } from '../metrics.js';
import type { JobTracker } from '../runs/job-tracker.js';
import { checkAgentMessage, checkRegistration } from './agent-limits.js';
import { principalOf, toServiceError } from './call-auth.js';

export interface AgentServiceDeps {
  registry: AgentRegistry;
  tracker: JobTracker;
  metrics: CollectorMetrics;
  log: Logger;
  auth: Authenticator;
  heartbeatIntervalMs: number;
  /** Whether a run is executing in this collector; agents' jobs of other runs are cancelled. */
  isRunActive: (runId: string) => boolean;
  /** Monitoring reports go to the monitor coordinator; they are acknowledged, not stored. */
  onMonitorReport?: (agentId: string, report: MonitorReport) => void;
}

/** A message the wire could not decode (a uint64 above 2^53, a broken field): refused by the handler, naming the message. */
interface Undecodable {
  undecodable: string;
}

function decodeOr<T>(decode: (b: Buffer) => T): (b: Buffer) => T | Undecodable {
  return (b) => {
    try {
      return decode(b);
    } catch (err) {
      return { undecodable: (err as Error).message.slice(0, 200) };
    }
  };
}

const undecodable = (m: unknown): m is Undecodable => typeof m === 'object' && m !== null && 'undecodable' in m;

/** AgentService with decoders that never throw: grpc-js would answer INTERNAL without a field. */
function tolerantService(): typeof AgentServiceService {
  return {
    ...AgentServiceService,
    register: {
      ...AgentServiceService.register,
      requestDeserialize: decodeOr(RegisterRequest.decode) as (b: Buffer) => RegisterRequest,
    },
    session: {
      ...AgentServiceService.session,
      requestDeserialize: decodeOr(AgentMessage.decode) as (b: Buffer) => AgentMessage,
    },
  };
}

const verified = (p: Principal): boolean => p.kind === 'agent' && p.via !== 'open';

export class AgentServiceImpl {
  constructor(private readonly deps: AgentServiceDeps) {}

  addToServer(server: Server): void {
    server.addService(tolerantService(), {
      register: (call: ServerUnaryCall<RegisterRequest, RegisterResponse>, cb: sendUnaryData<RegisterResponse>) =>
        this.register(call, cb),
      session: (call: ServerDuplexStream<AgentMessage, CollectorMessage>) => this.session(call),
    });
  }

  private register(
    call: ServerUnaryCall<RegisterRequest, RegisterResponse>,
    cb: sendUnaryData<RegisterResponse>,
  ): void {
    const req = call.request;
    principalOf(this.deps.auth, call)
      .then((p) => {
        if (undecodable(req))
          throw new CniBenchError(ErrorCodes.VALIDATION, `register: cannot decode the request (${req.undecodable})`, {
            details: { field: 'register' },
          });
        checkRegistration(req);
        this.deps.auth.requireNode(p, req.nodeName);
        const entry = this.deps.registry.register(req, verified(p));
        this.deps.log.info('agent registered', {
          agent: entry.id,
          podIp: req.podIp,
          instance: req.instanceId,
          identity: p.kind === 'agent' ? p.via : p.kind,
        });
        cb(null, {
          agentId: entry.id,
          heartbeatIntervalMs: this.deps.heartbeatIntervalMs,
          lastAckedSeq: entry.lastSeq,
        });
      })
      .catch((err: unknown) => {
        this.deps.log.warn('registration refused', {
          node: String(req.nodeName ?? '').slice(0, 64),
          error: (err as Error).message.slice(0, 300),
        });
        cb(toServiceError(err));
      });
  }

  private session(call: ServerDuplexStream<AgentMessage, CollectorMessage>): void {
    const { registry, tracker, metrics, log, auth } = this.deps;
    const principal = principalOf(auth, call);
    let agentId: string | undefined;
    let closed = false;
    // A session that cannot take our writes stops being read until it drains (backpressure to the agent).
    const send = (m: CollectorMessage): void => {
      if (!closed && !call.write(m)) call.pause();
    };
    call.on('drain', () => call.resume());
    const refuse = (err: CniBenchError): void => {
      if (closed) return;
      log.warn('session refused', { agent: agentId?.slice(0, 64), error: err.message });
      close();
      call.emit('error', toServiceError(err));
    };
    const hello = async (h: { agentId: string; instanceId: string; activeRunIds: string[] }): Promise<void> => {
      const entry = registry.get(h.agentId);
      if (!entry)
        throw new CniBenchError(ErrorCodes.NOT_FOUND, `agent_id: '${h.agentId.slice(0, 64)}' has not registered`, {
          details: { field: 'agent_id' },
        });
      auth.requireNode(await principal, entry.info.nodeName);
      if (entry.info.instanceId !== h.instanceId) {
        throw new CniBenchError(
          ErrorCodes.FORBIDDEN,
          `instance_id: not the instance that registered agent '${h.agentId.slice(0, 64)}'; register again`,
          { details: { field: 'instance_id' } },
        );
      }
      agentId = h.agentId;
      registry.attach(agentId, send);
      for (const runId of h.activeRunIds.slice(0, 64)) {
        if (!this.deps.isRunActive(runId))
          send({
            body: {
              $case: 'job',
              value: { jobId: `cancel-${runId}`, runId, kind: { $case: 'cancel', value: { jobId: '', runId } } },
            },
          });
      }
    };
    const handle = async (msg: AgentMessage): Promise<void> => {
      if (undecodable(msg))
        throw new CniBenchError(ErrorCodes.VALIDATION, `message: cannot decode (${msg.undecodable})`, {
          details: { field: 'message' },
        });
      const body = msg.body;
      if (!body || closed) return;
      checkAgentMessage(msg);
      if (body.$case === 'hello') {
        if (agentId)
          throw new CniBenchError(ErrorCodes.VALIDATION, 'hello: sent twice on one session', {
            details: { field: 'hello' },
          });
        await hello(body.value);
        return;
      }
      if (!agentId)
        throw new CniBenchError(ErrorCodes.VALIDATION, 'hello: must be the first message of a session', {
          details: { field: 'hello' },
        });
      registry.touch(agentId, body.$case === 'heartbeat' ? body.value : undefined);
      if (msg.seq === 0) return;
      const verdict = registry.accept(agentId, msg.seq);
      if (verdict === 'out-of-window') {
        metrics.agentMessage(body.$case, 'out-of-window');
        log.warn('sequence number out of window, not stored', {
          agent: agentId,
          seq: msg.seq,
          last: registry.lastSeq(agentId),
        });
        return;
      }
      if (verdict === 'new') {
        let stored: boolean;
        try {
          if (body.$case === 'monitorReport') {
            this.deps.onMonitorReport?.(agentId, body.value);
            stored = true;
          } else stored = tracker.onMessage(agentId, msg);
        } catch (err) {
          // Not acknowledged: the agent keeps it and resends on its next session.
          log.error('cannot store agent message', { agent: agentId, seq: msg.seq, error: (err as Error).message });
          throw new CniBenchError(ErrorCodes.INTERNAL, 'store: cannot keep the message; resend it', { cause: err });
        }
        metrics.agentMessage(body.$case, stored ? 'stored' : 'refused');
        if (!stored)
          log.debug('message refused: not this agent\u2019s job or run', {
            agent: agentId,
            seq: msg.seq,
            type: body.$case,
          });
      } else metrics.agentMessage(body.$case, 'duplicate');
      send({ body: { $case: 'ack', value: { seq: registry.lastSeq(agentId) } } });
    };
    // One message at a time, in order (identity may need the API server first).
    let chain = Promise.resolve();
    call.on('data', (msg: AgentMessage) => {
      chain = chain
        .then(() => handle(msg))
        .catch((err: unknown) =>
          refuse(err instanceof CniBenchError ? err : new CniBenchError(ErrorCodes.INTERNAL, (err as Error).message)),
        );
    });
    const close = (): void => {
      closed = true;
      if (agentId) registry.detach(agentId, send);
    };
    call.on('end', () => {
      if (closed) return;
      close();
      call.end();
    });
    call.on('error', close);
    call.on('cancelled', close);
  }
}
