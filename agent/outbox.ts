/**
 * Numbers every upward data message and keeps it until the collector
 * acknowledges it, so nothing is lost across a collector restart or a dropped
 * stream. The buffer is bounded in messages and in bytes: on overflow the
 * oldest message goes and the loss is counted (and reported in heartbeats),
 * never silent. Sending honours flow control: when the stream's write()
 * says stop, the outbox waits for resume() (the stream's 'drain'), and it never
 * has more than `maxInFlight` messages sent but unacknowledged, so a reconnect
 * replays its backlog in bounded batches, each released by the collector's
 * acknowledgements (which follow its commits).
 */
import { AgentMessage } from '../gen/cnibench/v1/agent.js';

export type SequencedBody = NonNullable<AgentMessage['body']>;

/** Writes one message; false: the stream is full, wait for resume(). */
export type OutboxSend = (m: AgentMessage) => boolean | undefined;

/** Default byte bound: a few thousand samples of a busy node, well inside the agent's memory budget. */
export const DEFAULT_OUTBOX_BYTES = 16 * 1024 * 1024;

/** Default most messages sent and not yet acknowledged (below the collector's per-session window). */
export const DEFAULT_OUTBOX_IN_FLIGHT = 256;

export class Outbox {
  private nextSeq = 1;
  private readonly pending: AgentMessage[] = [];
  private readonly sizes: number[] = [];
  private pendingBytes = 0;
  private droppedCount = 0;
  private listener: OutboxSend | undefined;
  /** Highest seq written on the current stream. */
  private sentUpTo = 0;
  private paused = false;

  constructor(
    private readonly limit: number,
    private readonly maxBytes = DEFAULT_OUTBOX_BYTES,
    private readonly maxInFlight = DEFAULT_OUTBOX_IN_FLIGHT,
  ) {
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1)
      throw new RangeError('outbox in-flight limit must be a positive integer');
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('outbox limit must be a positive integer');
    if (!Number.isInteger(maxBytes) || maxBytes < 1024)
      throw new RangeError('outbox byte limit must be an integer of at least 1024');
  }

  /** Queues a message; it is sent at once if a stream is attached and not full, and kept until acked. */
  push(body: SequencedBody): AgentMessage {
    const msg: AgentMessage = { seq: this.nextSeq++, body };
    const size = AgentMessage.encode(msg).finish().length;
    this.pending.push(msg);
    this.sizes.push(size);
    this.pendingBytes += size;
    while (this.pending.length > 1 && (this.pending.length > this.limit || this.pendingBytes > this.maxBytes))
      this.dropOldest();
    if (this.pending.length > this.limit) this.dropOldest();
    this.flush();
    return msg;
  }

  private dropOldest(): void {
    this.pending.shift();
    this.pendingBytes -= this.sizes.shift() ?? 0;
    this.droppedCount++;
  }

  /** Drops everything up to and including `seq` (cumulative acknowledgement). */
  ack(seq: number): void {
    let n = 0;
    while (n < this.pending.length && (this.pending[n]?.seq ?? Infinity) <= seq) n++;
    if (n > 0) {
      this.pending.splice(0, n);
      for (const s of this.sizes.splice(0, n)) this.pendingBytes -= s;
      // Acknowledgements open the window for the next batch.
      this.flush();
    }
  }

  /** Attaches a live stream: replays what is unacknowledged in batches of maxInFlight, then forwards new messages. */
  attach(send: OutboxSend): void {
    this.listener = send;
    this.sentUpTo = 0;
    this.paused = false;
    this.flush();
  }

  /** The stream drained: go on sending. */
  resume(): void {
    this.paused = false;
    this.flush();
  }

  detach(): void {
    this.listener = undefined;
  }

  private flush(): void {
    if (!this.listener || this.paused || this.pending.length === 0) return;
    // Sequence numbers in the buffer are consecutive, so the next unsent one is found by arithmetic,
    // and its index is how many are in flight (sent, not yet acknowledged).
    for (let i = Math.max(0, this.sentUpTo + 1 - this.pending[0]!.seq); i < this.pending.length; i++) {
      if (i >= this.maxInFlight) return;
      const m = this.pending[i]!;
      this.sentUpTo = m.seq;
      if (this.listener(m) === false) {
        this.paused = true;
        return;
      }
    }
  }

  get dropped(): number {
    return this.droppedCount;
  }

  get size(): number {
    return this.pending.length;
  }

  get bytes(): number {
    return this.pendingBytes;
  }

  /** Messages sent on the current stream and not yet acknowledged. */
  get inFlight(): number {
    if (!this.listener || this.pending.length === 0) return 0;
    return Math.max(0, Math.min(this.pending.length, this.sentUpTo + 1 - this.pending[0]!.seq));
  }
}
