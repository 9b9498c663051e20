/**
 * Numbers every upward data message and keeps it until the collector
 * acknowledges it, so nothing is lost across a collector restart or a dropped
 * stream. The buffer is bounded: on overflow the oldest message goes and the
 * loss is counted (and reported in heartbeats), never silent.
 */
import type { AgentMessage } from '../gen/cnibench/v1/agent.js';

export type SequencedBody = NonNullable<AgentMessage['body']>;

export class Outbox {
  private nextSeq = 1;
  private readonly pending: AgentMessage[] = [];
  private droppedCount = 0;
  private listener: ((m: AgentMessage) => void) | undefined;

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('outbox limit must be a positive integer');
  }

  /** Queues a message; it is sent at once if a stream is attached, and kept until acked. */
  push(body: SequencedBody): AgentMessage {
    const msg: AgentMessage = { seq: this.nextSeq++, body };
    this.pending.push(msg);
    if (this.pending.length > this.limit) {
      this.pending.shift();
      this.droppedCount++;
    }
    this.listener?.(msg);
    return msg;
  }

  /** Drops everything up to and including `seq` (cumulative acknowledgement). */
  ack(seq: number): void {
    let n = 0;
    while (n < this.pending.length && (this.pending[n]?.seq ?? Infinity) <= seq) n++;
    if (n > 0) this.pending.splice(0, n);
  }

  /** Attaches a live stream: replays everything unacknowledged, then forwards new messages. */
  attach(send: (m: AgentMessage) => void): void {
    this.listener = send;
    for (const m of [...this.pending]) send(m);
  }

  detach(): void {
    this.listener = undefined;
  }

  get dropped(): number {
    return this.droppedCount;
  }

  get size(): number {
    return this.pending.length;
  }
}
