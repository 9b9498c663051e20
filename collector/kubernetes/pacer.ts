/**
 * How the collector talks to an apiserver in bulk without hurting it: at most
 * `parallelism` requests in flight, a client-side token bucket (`qps` with
 * `burst`, like client-go's rate limiter), and retries with exponential backoff
 * and jitter on 429 (honouring Retry-After) and 5xx answers and on dropped
 * connections. Anything else fails at once: a 403 retried is still a 403.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

export interface PacerOptions {
  qps: number;
  burst: number;
  parallelism: number;
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_PACER: PacerOptions = Object.freeze({
  qps: 50,
  burst: 100,
  parallelism: 16,
  maxRetries: 8,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
});

/** HTTP status and Retry-After of a failed call, as far as the error shows them. */
export function statusOf(err: unknown): { status: number | undefined; retryAfterS: number | undefined } {
  const e = err as { code?: unknown; statusCode?: unknown; headers?: Record<string, string | string[] | undefined> };
  const status = typeof e?.code === 'number' ? e.code : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
  const raw = e?.headers?.['retry-after'] ?? e?.headers?.['Retry-After'];
  const retryAfterS = raw === undefined ? undefined : Number(Array.isArray(raw) ? raw[0] : raw);
  return { status, retryAfterS: Number.isFinite(retryAfterS) ? retryAfterS : undefined };
}

/** The apiserver's own explanation (a Status object's message), when the error carries one. */
export function apiMessage(err: unknown): string {
  const body = (err as { body?: unknown })?.body;
  try {
    const parsed =
      typeof body === 'string'
        ? (JSON.parse(body) as { message?: unknown })
        : (body as { message?: unknown } | undefined);
    return typeof parsed?.message === 'string' ? parsed.message : '';
  } catch {
    return '';
  }
}

const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_SOCKET']);

export function isRetryable(err: unknown): boolean {
  const { status } = statusOf(err);
  if (status !== undefined) return status === 429 || status >= 500;
  const code =
    (err as { code?: unknown; cause?: { code?: unknown } })?.code ??
    (err as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === 'string' && NETWORK_CODES.has(code);
}

export class Pacer {
  private tokens: number;
  private refilledAt: number;
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];
  /** Calls retried so far (a run reports them: many retries mean a struggling apiserver). */
  retries = 0;

  constructor(
    private readonly opts: PacerOptions = DEFAULT_PACER,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {
    for (const k of ['qps', 'burst', 'parallelism'] as const) {
      if (!(opts[k] > 0))
        throw new CniBenchError(ErrorCodes.VALIDATION, `kubernetes.${k}: must be positive, got ${opts[k]}`, {
          details: { field: `kubernetes.${k}` },
        });
    }
    this.tokens = opts.burst;
    this.refilledAt = now();
  }

  /** Runs `call` within the limits, retrying what is worth retrying. `what` names it in the final error. */
  async run<T>(what: string, call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      await this.acquire(signal);
      let failure: unknown;
      try {
        return await call();
      } catch (err) {
        failure = err;
      } finally {
        this.release();
      }
      const { status, retryAfterS } = statusOf(failure);
      if (!isRetryable(failure) || attempt >= this.opts.maxRetries) {
        const message = apiMessage(failure);
        throw new CniBenchError(
          ErrorCodes.KUBERNETES,
          `${what}: ${status ? `HTTP ${status}` : (failure as Error).message}${message ? ` (${message})` : ''}${attempt ? ` after ${attempt} retries` : ''}`,
          {
            cause: failure,
            details: { status: status ?? 0, attempts: attempt + 1 },
          },
        );
      }
      this.retries++;
      await sleep(this.delayMs(attempt, retryAfterS), undefined, signal ? { signal } : {});
    }
  }

  /** Backoff before retry `attempt` (0-based): Retry-After when given, else full jitter up to base*2^attempt. */
  delayMs(attempt: number, retryAfterS?: number): number {
    if (retryAfterS !== undefined) return Math.min(this.opts.maxDelayMs, retryAfterS * 1000);
    return Math.floor(this.random() * Math.min(this.opts.maxDelayMs, this.opts.baseDelayMs * 2 ** attempt));
  }

  private async acquire(signal?: AbortSignal): Promise<void> {
    while (this.inFlight >= this.opts.parallelism) await new Promise<void>((r) => this.waiting.push(r));
    this.inFlight++;
    for (;;) {
      signal?.throwIfAborted();
      const t = this.now();
      this.tokens = Math.min(this.opts.burst, this.tokens + ((t - this.refilledAt) / 1000) * this.opts.qps);
      this.refilledAt = t;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await sleep(Math.ceil(((1 - this.tokens) / this.opts.qps) * 1000));
    }
  }

  private release(): void {
    this.inFlight--;
    this.waiting.shift()?.();
  }
}

/**
 * Deletes every object `names` lists (names already listed through `pacer`), each delete through `pacer` with a 404
 * taken as already gone; returns how many there were. `what` names the kind and namespace in the pacer's labels.
 */
export async function deleteListed(
  pacer: Pacer,
  what: string,
  names: readonly string[],
  deleteOne: (name: string) => Promise<unknown>,
): Promise<number> {
  await Promise.all(
    names.map((name) =>
      pacer.run(`delete ${what}/${name}`, () =>
        deleteOne(name).catch((err: unknown) => {
          if (statusOf(err).status !== 404) throw err;
        }),
      ),
    ),
  );
  return names.length;
}
