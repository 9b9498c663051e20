/**
 * The agent's side of the control plane: registers, holds the Session stream
 * open, and reconnects with exponential backoff and full jitter whenever the
 * collector goes away. Unacknowledged messages are replayed by the Outbox on
 * every new stream.
 */
import { type ClientDuplexStream, credentials, Metadata } from '@grpc/grpc-js';
import type { Logger } from '../core/log.js';
import { sleep } from '../core/sleep.js';
import {
  type AgentMessage,
  AgentServiceClient,
  type CollectorMessage,
  type Job,
  type MonitorPlan,
  type RegisterRequest,
  type RegisterResponse,
} from '../gen/cnibench/v1/agent.js';
import type { LinkTransport } from './link-credentials.js';
import type { Outbox } from './outbox.js';

export interface LinkDeps {
  address: string;
  outbox: Outbox;
  /** Built fresh before each registration (tools and dataplane may change). */
  registration: () => Promise<RegisterRequest>;
  onJob: (job: Job) => void;
  /** A monitoring plan from the collector (agents with monitoring on). */
  onMonitorPlan?: (plan: MonitorPlan) => void;
  activeRunIds: () => string[];
  runningJobs: () => number;
  log: Logger;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** TLS or plaintext (the default) to the collector; see link-credentials.ts. */
  transport?: Pick<LinkTransport, 'credentials' | 'options'> & Partial<Pick<LinkTransport, 'token'>>;
}

const CHANNEL_OPTIONS = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.min_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
  'grpc.keepalive_permit_without_calls': 1,
};

/** Full-jitter exponential backoff: uniform in [0, min(max, base * 2^attempt)]. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * cap);
}

export class CollectorLink {
  private readonly client: AgentServiceClient;
  private stream: ClientDuplexStream<AgentMessage, CollectorMessage> | undefined;
  private registered = false;
  agentId = '';
  private instanceId = '';
  private readonly token: () => string;
  sessions = 0;

  constructor(private readonly deps: LinkDeps) {
    const transport = deps.transport ?? { credentials: credentials.createInsecure(), options: {} };
    this.client = new AgentServiceClient(deps.address, transport.credentials, {
      ...CHANNEL_OPTIONS,
      ...transport.options,
    });
    this.token = deps.transport?.token ?? (() => '');
  }

  /** Call metadata carrying the agent's identity token, when it has one. */
  private metadata(): Metadata {
    const md = new Metadata();
    const t = this.token();
    if (t) md.set('authorization', `Bearer ${t}`);
    return md;
  }

  get connected(): boolean {
    return this.registered && this.stream !== undefined;
  }

  /** Runs until `signal` aborts. Never throws: every failure leads to a retry. */
  async run(signal: AbortSignal): Promise<void> {
    let attempt = 0;
    while (!signal.aborted) {
      try {
        const reg = await this.register();
        attempt = 0;
        await this.session(reg, signal);
      } catch (err) {
        this.deps.log.debug('collector link failed', { error: (err as Error).message });
      }
      this.registered = false;
      if (signal.aborted) break;
      attempt++;
      await sleep(backoffDelay(attempt, this.deps.backoffBaseMs, this.deps.backoffMaxMs), signal);
    }
    this.client.close();
  }

  private async register(): Promise<RegisterResponse> {
    const req = await this.deps.registration();
    this.instanceId = req.instanceId;
    return new Promise((resolve, reject) => {
      this.client.register(req, this.metadata(), { deadline: Date.now() + 5000 }, (err, res) =>
        err ? reject(err) : resolve(res),
      );
    });
  }

  private session(reg: RegisterResponse, signal: AbortSignal): Promise<void> {
    const { outbox, log } = this.deps;
    this.agentId = reg.agentId;
    outbox.ack(reg.lastAckedSeq);
    return new Promise<void>((resolve) => {
      const stream = this.client.session(this.metadata());
      this.stream = stream;
      this.registered = true;
      this.sessions++;
      // write() says when the stream is full; the outbox then waits for 'drain' (flow control end to end).
      const send = (m: AgentMessage): boolean => stream.write(m);
      stream.on('drain', () => outbox.resume());
      const heartbeat = (): void => {
        send({
          seq: 0,
          body: {
            $case: 'heartbeat',
            value: {
              timeMs: Date.now(),
              runningJobs: this.deps.runningJobs(),
              outboxDropped: outbox.dropped,
              outboxPending: outbox.size,
            },
          },
        });
      };
      let done = false;
      const finish = (why: string): void => {
        if (done) return;
        done = true;
        clearInterval(timer);
        signal.removeEventListener('abort', onAbort);
        outbox.detach();
        this.stream = undefined;
        log.info('session ended', { why });
        stream.cancel();
        resolve();
      };
      const onAbort = (): void => finish('agent stopping');
      signal.addEventListener('abort', onAbort, { once: true });
      const timer = setInterval(heartbeat, Math.max(200, reg.heartbeatIntervalMs || 2000));
      stream.on('data', (m: CollectorMessage) => {
        if (m.body?.$case === 'ack') outbox.ack(m.body.value.seq);
        else if (m.body?.$case === 'job') this.deps.onJob(m.body.value);
        else if (m.body?.$case === 'monitorPlan') this.deps.onMonitorPlan?.(m.body.value);
      });
      stream.on('error', (err) => finish(`stream error: ${err.message}`));
      stream.on('end', () => finish('collector closed the stream'));
      send({
        seq: 0,
        body: {
          $case: 'hello',
          value: { agentId: reg.agentId, instanceId: this.instanceId, activeRunIds: this.deps.activeRunIds() },
        },
      });
      outbox.attach(send);
      heartbeat();
      log.info('session open', { agentId: reg.agentId, pending: outbox.size });
    });
  }
}
