/**
 * A scripted agent over real gRPC, for tests that play an attacker or a
 * misbehaving agent against the real collector: it registers whatever it is
 * told, opens a Session, sends exactly the messages the test gives it and
 * records what the collector sends back. Not a substitute for the agent: the
 * real agent process is what every functional test runs.
 */
import {
  type ChannelCredentials,
  type ClientDuplexStream,
  credentials,
  Metadata,
  type ServiceError,
} from '@grpc/grpc-js';
import {
  AgentMessage,
  AgentServiceClient,
  type CollectorMessage,
  RegisterRequest,
  type RegisterResponse,
} from '../../../gen/cnibench/v1/agent.js';

export interface SimAgentOptions {
  address: string;
  creds?: ChannelCredentials;
  /** Sent as `authorization: Bearer <token>` on every call. */
  token?: string;
  channelOptions?: Record<string, string | number>;
}

export class SimAgent {
  readonly client: AgentServiceClient;
  stream: ClientDuplexStream<AgentMessage, CollectorMessage> | undefined;
  readonly received: CollectorMessage[] = [];
  ended: ServiceError | 'end' | undefined;

  constructor(private readonly o: SimAgentOptions) {
    this.client = new AgentServiceClient(o.address, o.creds ?? credentials.createInsecure(), o.channelOptions ?? {});
  }

  private md(): Metadata {
    const m = new Metadata();
    if (this.o.token) m.set('authorization', `Bearer ${this.o.token}`);
    return m;
  }

  /** Register; resolves with the response or the error the collector answered with. */
  register(req: Partial<RegisterRequest>): Promise<RegisterResponse | ServiceError> {
    const full = RegisterRequest.fromPartial({ podIp: '127.0.0.1', instanceId: 'sim', agentVersion: 'sim', ...req });
    return new Promise((resolve) =>
      this.client.register(full, this.md(), { deadline: Date.now() + 60_000 }, (err, res) => resolve(err ?? res)),
    );
  }

  /** Opens a Session and says hello as `agentId`. */
  open(agentId: string, instanceId = 'sim', activeRunIds: string[] = []): void {
    const s = this.client.session(this.md());
    this.stream = s;
    s.on('data', (m: CollectorMessage) => this.received.push(m));
    s.on('error', (e: ServiceError) => (this.ended ??= e));
    s.on('end', () => (this.ended ??= 'end'));
    s.write({ seq: 0, body: { $case: 'hello', value: { agentId, instanceId, activeRunIds } } });
  }

  /** Sends a message; missing fields take their defaults (as on the wire). */
  send(m: { seq: number; body?: unknown }): void {
    this.stream?.write(AgentMessage.fromPartial(m as AgentMessage));
  }

  /** Highest cumulative ack received so far. */
  lastAck(): number {
    return Math.max(
      0,
      ...this.received
        .filter((m) => m.body?.$case === 'ack')
        .map((m) => (m.body as { value: { seq: number } }).value.seq),
    );
  }

  jobs(): CollectorMessage[] {
    return this.received.filter((m) => m.body?.$case === 'job');
  }

  close(): void {
    this.stream?.cancel();
    this.client.close();
  }
}

export function isServiceError(x: unknown): x is ServiceError {
  return typeof x === 'object' && x !== null && 'code' in x && 'details' in x;
}
