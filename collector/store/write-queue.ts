/**
 * Inserts of agents' results and samples, off the hot path: a queue flushed in
 * one transaction every `maxBatch` records or `maxDelayMs`, whichever comes
 * first. Each add() resolves only once its transaction has committed, so a
 * message is acknowledged to its agent only after it is on disk (an agent keeps
 * what is not acknowledged and resends it). A failed transaction (disk full, a
 * broken file) rejects every entry of its batch; nothing in it is acknowledged.
 * Past `highWater` queued records the queue reports itself full, and sessions
 * stop reading their streams until it drains below `lowWater` (backpressure to
 * the agents through HTTP/2 flow control).
 */
import { EventEmitter } from 'node:events';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { type ResultRecord, type SampleRecord, type Store, storeWriteError } from './store.js';

export interface WriteQueueOptions {
  /** Records per transaction at most (bounds the time one flush holds the event loop). */
  maxBatch: number;
  /** Longest a record waits for its transaction. */
  maxDelayMs: number;
  /** Queued records at which the queue is full (sessions pause). */
  highWater: number;
  /** Queued records below which a full queue drains (sessions resume). */
  lowWater: number;
}

export const DEFAULT_WRITE_QUEUE: WriteQueueOptions = {
  maxBatch: 512,
  maxDelayMs: 10,
  highWater: 8192,
  lowWater: 2048,
};

type Op = { kind: 'sample'; record: SampleRecord } | { kind: 'result'; record: ResultRecord };

interface Entry {
  op: Op | undefined;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface WriteQueueStats {
  /** Transactions committed. */
  batches: number;
  /** Records committed. */
  records: number;
  /** Transactions that failed (their entries were not acknowledged). */
  failures: number;
  /** Most records queued at once. */
  maxDepth: number;
  /** Times the queue became full. */
  fullEvents: number;
}

export class WriteQueue extends EventEmitter<{ full: []; drained: []; failed: [err: CniBenchError] }> {
  private entries: Entry[] = [];
  private depth = 0;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private isFull = false;
  private closed = false;
  readonly stats: WriteQueueStats = { batches: 0, records: 0, failures: 0, maxDepth: 0, fullEvents: 0 };
  /** The last failure's one-line message, until a transaction commits again. */
  lastError: string | undefined;

  constructor(
    readonly store: Store,
    private readonly options: WriteQueueOptions = DEFAULT_WRITE_QUEUE,
  ) {
    super();
    this.setMaxListeners(0);
  }

  /** Queues a sample; resolves once committed. */
  addSample(record: SampleRecord): Promise<void> {
    return this.enqueue({ kind: 'sample', record });
  }

  /** Queues a result; resolves once committed. */
  addResult(record: ResultRecord): Promise<void> {
    return this.enqueue({ kind: 'result', record });
  }

  /** Resolves once everything queued before it has committed (rejects if its batch fails). */
  barrier(): Promise<void> {
    if (this.entries.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.entries.push({ op: undefined, resolve, reject });
    });
  }

  /** Whether sessions should stop reading until 'drained'. */
  get full(): boolean {
    return this.isFull;
  }

  get queued(): number {
    return this.depth;
  }

  private enqueue(op: Op): Promise<void> {
    if (this.closed)
      return Promise.reject(new CniBenchError(ErrorCodes.STORE, 'store: the collector is shutting down'));
    return new Promise((resolve, reject) => {
      this.entries.push({ op, resolve, reject });
      this.depth++;
      if (this.depth > this.stats.maxDepth) this.stats.maxDepth = this.depth;
      if (!this.isFull && this.depth >= this.options.highWater) {
        this.isFull = true;
        this.stats.fullEvents++;
        this.emit('full');
      }
      if (this.depth >= this.options.maxBatch) this.scheduleNow();
      else this.timer ??= setTimeout(() => this.flush(), this.options.maxDelayMs);
    });
  }

  private scheduleNow(): void {
    this.immediate ??= setImmediate(() => this.flush());
  }

  /** Commits up to maxBatch records in one transaction; schedules the rest. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    if (this.entries.length === 0) return;
    let records = 0;
    let n = 0;
    while (n < this.entries.length && records < this.options.maxBatch) {
      if (this.entries[n]!.op) records++;
      n++;
    }
    // Barriers right behind the batch belong to it.
    while (n < this.entries.length && !this.entries[n]!.op) n++;
    const batch = this.entries.splice(0, n);
    this.depth -= records;
    let failure: CniBenchError | undefined;
    try {
      this.store.transaction(() => {
        for (const e of batch) {
          if (e.op?.kind === 'sample') this.store.addSample(e.op.record);
          else if (e.op?.kind === 'result') this.store.addResult(e.op.record);
        }
      });
      this.stats.batches++;
      this.stats.records += records;
      this.lastError = undefined;
    } catch (err) {
      this.stats.failures++;
      const why = err instanceof CniBenchError ? err.message : storeWriteError(this.store.path, err).message;
      failure = new CniBenchError(ErrorCodes.STORE, `${why} (${records} record(s) not acknowledged)`, {
        cause: err,
        details: { field: 'dbPath', path: this.store.path },
      });
      this.lastError = failure.message;
      this.emit('failed', failure);
    }
    for (const e of batch) {
      if (failure) e.reject(failure);
      else e.resolve();
    }
    if (this.isFull && this.depth < this.options.lowWater) {
      this.isFull = false;
      this.emit('drained');
    }
    if (this.entries.length > 0) {
      if (this.depth >= this.options.maxBatch || this.entries.every((e) => !e.op)) this.scheduleNow();
      else this.timer ??= setTimeout(() => this.flush(), this.options.maxDelayMs);
    }
  }

  /** Commits everything queued (at shutdown); later adds are refused. */
  close(): void {
    while (this.entries.length > 0) this.flush();
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
  }
}
