/**
 * The collector's AgentService: Register and the Session stream. It never binds
 * a port; main adds it to a server. Every call is tied to the caller's identity
 * (call-auth.ts): a node is spoken for only by its own identity, a session only
 * by the instance that registered it. Every sequenced message is checked
 * (sequence window, job and run ownership) and stored before it is
 * acknowledged, so an agent only forgets what the collector has kept. Inserts
 * go through the write queue (batched transactions off the message path);
 * acknowledgements follow commits, in order. A session stops reading its
 * stream while its own acknowledgements lag SESSION_WINDOW messages behind,
 * while the store's queue is full, or while the agent does not take our
 * writes: HTTP/2 flow control then holds the agent's outbox.
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
import type { WriteQueue } from '../store/write-queue.js';
import { checkAgentMessage, checkRegistration } from './agent-limits.js';
import { principalOf, toServiceError } from './call-auth.js';

export interface AgentServiceDeps {
  registry: AgentRegistry;
  tracker: JobTracker;
  /** The store's write queue: acknowledgements wait for its commits. */
  queue: WriteQueue;
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

/** Messages of one session accepted but not yet acknowledged at which the session stops reading. */
export const SESSION_WINDOW = 1024;

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
          lastAckedSeq: entry.ackedSeq,
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
    const { registry, tracker, queue, metrics, log, auth } = this.deps;
    const principal = principalOf(auth, call);
    let agentId: string | undefined;
    let instanceId = '';
    let closed = false;
    /** A transaction of this session's failed: nothing after it may be acknowledged. */
    let failed = false;
    let unacked = 0;
    // Why the stream is not being read; it is read again once no reason is left.
    const pausedFor = new Set<'write' | 'window' | 'store'>();
    const pause = (why: 'write' | 'window' | 'store'): void => {
      if (pausedFor.size === 0) call.pause();
      pausedFor.add(why);
    };
    const resume = (why: 'write' | 'window' | 'store'): void => {
      if (pausedFor.delete(why) && pausedFor.size === 0 && !closed) call.resume();
    };
    const onDrained = (): void => resume('store');
    // A session that cannot take our writes stops being read until it drains (backpressure to the agent).
    const send = (m: CollectorMessage): void => {
      if (!closed && !call.write(m)) pause('write');
    };
    call.on('drain', () => resume('write'));
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
      instanceId = h.instanceId;
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
    /** Acknowledges `seq` once `done` (its commit, or the commit of all before it) resolves; in order. */
    const ackAfter = (id: string, seq: number, done: Promise<void>): void => {
      unacked++;
      if (unacked >= SESSION_WINDOW) pause('window');
      if (queue.full && !pausedFor.has('store')) {
        pause('store');
        queue.once('drained', onDrained);
      }
      done.then(
        () => {
          unacked--;
          if (unacked < SESSION_WINDOW / 2) resume('window');
          if (failed) return;
          send({ body: { $case: 'ack', value: { seq: registry.committed(id, instanceId, seq) } } });
        },
        (err: unknown) => {
          unacked--;
          if (failed) return;
          failed = true;
          // Accepted but not kept: the agent's resend must count as new.
          registry.rollback(id, instanceId);
          log.error('cannot store agent messages; the session is closed and the agent resends', {
            agent: id,
            seq,
            error: (err as Error).message,
          });
          refuse(
            err instanceof CniBenchError
              ? err
              : new CniBenchError(ErrorCodes.STORE, 'store: cannot keep the message; resend it', { cause: err }),
          );
        },
      );
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
      if (failed) return;
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
      if (verdict === 'duplicate') {
        // Already held, or on its way to the store: acknowledged once all before it has committed.
        metrics.agentMessage(body.$case, 'duplicate');
        ackAfter(agentId, Math.min(msg.seq, registry.lastSeq(agentId)), queue.barrier());
        return;
      }
      let done: Promise<void> | undefined;
      if (body.$case === 'monitorReport') {
        this.deps.onMonitorReport?.(agentId, body.value);
        metrics.agentMessage(body.$case, 'stored');
      } else {
        done = tracker.onMessage(agentId, msg);
        metrics.agentMessage(body.$case, done ? 'stored' : 'refused');
        if (!done)
          log.debug('message refused: not this agent\u2019s job or run', {
            agent: agentId,
            seq: msg.seq,
            type: body.$case,
          });
      }
      ackAfter(agentId, msg.seq, done ?? queue.barrier());
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
      queue.off('drained', onDrained);
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
