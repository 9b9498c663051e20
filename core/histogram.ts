/**
 * A log-linear latency histogram in microseconds, the in-memory form of the
 * proto message `Histogram`. Percentiles of several rounds or agents cannot be
 * averaged, but histograms can be merged exactly by adding counts; this is the
 * one place that bucketing lives, so every agent buckets the same way.
 *
 * Bucket 0 covers [0, 1). A value v >= 1 with e = floor(log2 v) and
 * s = floor((v / 2^e - 1) * 2^b) goes to bucket 1 + e * 2^b + s, so each power
 * of two is cut into 2^b equal buckets and the relative width is at most 2^-b
 * (b = 7: under 0.8%, midpoint error under 0.4%).
 */
import type { Histogram } from '../gen/cnibench/v1/agent.js';
import { CniBenchError, ErrorCodes } from './errors.js';

const DEFAULT_SUB_BUCKET_BITS = 7;
const MAX_SUB_BUCKET_BITS = 12;

function invalid(message: string, details: Record<string, unknown> = {}): CniBenchError {
  return new CniBenchError(ErrorCodes.VALIDATION, `histogram: ${message}`, { details });
}

function checkValue(us: number, what: string): void {
  if (typeof us !== 'number' || !Number.isFinite(us) || us < 0) {
    throw invalid(`${what} must be a finite number of microseconds >= 0, got ${String(us)}`, { value: us });
  }
}

function checkCount(count: number): void {
  if (!Number.isSafeInteger(count) || count < 0)
    throw invalid(`count must be a non-negative integer, got ${String(count)}`, { count });
}

export class LatencyHistogram {
  readonly subBucketBits: number;
  readonly #perOctave: number;
  readonly #counts = new Map<number, number>();
  #total = 0;
  #min = Infinity;
  #max = -Infinity;
  #sum = 0;

  constructor(subBucketBits = DEFAULT_SUB_BUCKET_BITS) {
    if (!Number.isInteger(subBucketBits) || subBucketBits < 0 || subBucketBits > MAX_SUB_BUCKET_BITS) {
      throw invalid(`subBucketBits must be an integer in [0, ${MAX_SUB_BUCKET_BITS}], got ${String(subBucketBits)}`);
    }
    this.subBucketBits = subBucketBits;
    this.#perOctave = 2 ** subBucketBits;
  }

  /** The bucket a value falls in. */
  indexOf(us: number): number {
    if (us < 1) return 0;
    let e = Math.floor(Math.log2(us));
    // log2 may round across a power of two; fix e so that 2^e <= us < 2^(e+1).
    if (2 ** e > us) e -= 1;
    else if (2 ** (e + 1) <= us) e += 1;
    const s = Math.min(this.#perOctave - 1, Math.floor((us / 2 ** e - 1) * this.#perOctave));
    return 1 + e * this.#perOctave + s;
  }

  /** Lower bound (inclusive) of bucket i; lower(i + 1) is its exclusive upper bound. */
  lower(i: number): number {
    if (i <= 0) return 0;
    const j = i - 1;
    const e = Math.floor(j / this.#perOctave);
    return 2 ** e * (1 + (j % this.#perOctave) / this.#perOctave);
  }

  record(us: number, count = 1): void {
    checkValue(us, 'value');
    checkCount(count);
    if (count === 0) return;
    this.#add(this.indexOf(us), count, us, us, us * count);
  }

  /**
   * Records `count` values known only to lie in [lowUs, highUs), as tools such
   * as fortio report them, spreading them over our buckets in proportion to the
   * overlap (uniform density inside the tool's bucket). Counts are apportioned
   * by rounding the cumulative share, so the total is conserved exactly.
   */
  recordRange(lowUs: number, highUs: number, count: number): void {
    checkValue(lowUs, 'range low');
    checkValue(highUs, 'range high');
    checkCount(count);
    if (highUs < lowUs) throw invalid(`range high ${highUs} is below range low ${lowUs}`, { lowUs, highUs });
    if (count === 0) return;
    if (highUs === lowUs) return this.record(lowUs, count);
    const width = highUs - lowUs;
    let covered = 0;
    let given = 0;
    for (let i = this.indexOf(lowUs); given < count; i++) {
      const lo = Math.max(lowUs, this.lower(i));
      const hi = Math.min(highUs, this.lower(i + 1));
      if (hi <= lo) continue;
      covered += hi - lo;
      const upTo = hi >= highUs ? count : Math.round((count * covered) / width);
      const n = upTo - given;
      if (n > 0) this.#add(i, n, lo, hi, (n * (lo + hi)) / 2);
      given = upTo;
    }
  }

  /** Adds another histogram's counts into this one; both must bucket alike. */
  merge(other: LatencyHistogram): this {
    if (other.subBucketBits !== this.subBucketBits) {
      throw invalid(`cannot merge subBucketBits ${other.subBucketBits} into ${this.subBucketBits}`, {
        subBucketBits: this.subBucketBits,
        other: other.subBucketBits,
      });
    }
    for (const [i, c] of other.#counts) this.#counts.set(i, (this.#counts.get(i) ?? 0) + c);
    this.#total += other.#total;
    this.#min = Math.min(this.#min, other.#min);
    this.#max = Math.max(this.#max, other.#max);
    this.#sum += other.#sum;
    return this;
  }

  /**
   * The value at percentile p in [0, 100]: the midpoint of the bucket holding
   * rank ceil(p/100 * total), clamped to [min, max]; p = 0 and p = 100 give the
   * exact min and max. NaN when empty.
   */
  percentile(p: number): number {
    if (typeof p !== 'number' || !(p >= 0 && p <= 100))
      throw invalid(`percentile must be in [0, 100], got ${String(p)}`, { p });
    if (this.#total === 0) return NaN;
    if (p === 0) return this.#min;
    if (p === 100) return this.#max;
    const rank = Math.max(1, Math.ceil((p / 100) * this.#total));
    let seen = 0;
    for (const i of this.#sortedIndexes()) {
      seen += this.#counts.get(i)!;
      if (seen >= rank) {
        const mid = (this.lower(i) + this.lower(i + 1)) / 2;
        return Math.min(this.#max, Math.max(this.#min, mid));
      }
    }
    return this.#max;
  }

  get total(): number {
    return this.#total;
  }

  /** NaN when empty. */
  get min(): number {
    return this.#total === 0 ? NaN : this.#min;
  }

  /** NaN when empty. */
  get max(): number {
    return this.#total === 0 ? NaN : this.#max;
  }

  /** NaN when empty. */
  get mean(): number {
    return this.#total === 0 ? NaN : this.#sum / this.#total;
  }

  /** The wire form; indexes ascending, empty buckets omitted, min/max 0 when empty. */
  toProto(): Histogram {
    const indexes = this.#sortedIndexes();
    return {
      subBucketBits: this.subBucketBits,
      indexes,
      counts: indexes.map((i) => this.#counts.get(i)!),
      total: this.#total,
      minUs: this.#total === 0 ? 0 : this.#min,
      maxUs: this.#total === 0 ? 0 : this.#max,
      sumUs: this.#sum,
    };
  }

  /**
   * Rebuilds a histogram from the wire, refusing anything inconsistent (a
   * corrupt or hand-made message would otherwise skew every merged result).
   */
  static fromProto(h: Histogram): LatencyHistogram {
    const out = new LatencyHistogram(h.subBucketBits);
    const { indexes, counts } = h;
    if (!Array.isArray(indexes) || !Array.isArray(counts) || indexes.length !== counts.length) {
      throw invalid(`indexes and counts must have the same length (${indexes?.length} vs ${counts?.length})`);
    }
    let total = 0;
    for (let k = 0; k < indexes.length; k++) {
      const i = indexes[k]!;
      const c = counts[k]!;
      if (!Number.isSafeInteger(i) || i < 0 || !Number.isFinite(out.lower(i + 1)))
        throw invalid(`bad bucket index ${String(i)} at ${k}`, { at: k });
      if (!Number.isSafeInteger(c) || c < 0)
        throw invalid(`counts must be non-negative integers, got ${String(c)} at ${k}`, { at: k });
      if (out.#counts.has(i)) throw invalid(`bucket index ${i} appears twice`, { at: k });
      if (c > 0) out.#counts.set(i, c);
      total += c;
    }
    if (h.total !== total) throw invalid(`total ${String(h.total)} does not equal the sum of counts ${total}`);
    for (const [v, what] of [
      [h.minUs, 'minUs'],
      [h.maxUs, 'maxUs'],
      [h.sumUs, 'sumUs'],
    ] as const)
      checkValue(v, what);
    if (total > 0) {
      const sorted = out.#sortedIndexes();
      const first = sorted[0]!;
      const last = sorted[sorted.length - 1]!;
      if (h.minUs > h.maxUs || h.minUs < out.lower(first) || h.maxUs > out.lower(last + 1)) {
        throw invalid(`min ${h.minUs} / max ${h.maxUs} lie outside the populated buckets`);
      }
      out.#min = h.minUs;
      out.#max = h.maxUs;
      out.#sum = h.sumUs;
      out.#total = total;
    }
    return out;
  }

  /**
   * Rebuilds a histogram from a tool's ranked points (the sample of rank r has
   * value us: its min, percentiles and max), for tools that print percentiles
   * but no buckets. Each point is one exact sample; the samples between two
   * points are spread evenly over the interval between their values. Points
   * must ascend in rank and value; `bad` turns a violation into the caller's
   * error (a parse error naming the tool).
   */
  static fromRankedPoints(
    points: readonly { rank: number; us: number }[],
    bad: (reason: string) => Error,
  ): LatencyHistogram {
    const h = new LatencyHistogram();
    const first = points[0];
    if (!first) return h;
    h.record(first.us, 1);
    for (let k = 1; k < points.length; k++) {
      const a = points[k - 1] as { rank: number; us: number };
      const b = points[k] as { rank: number; us: number };
      if (b.rank < a.rank || b.us < a.us)
        throw bad(`percentile points not ascending (${a.us} at rank ${a.rank}, ${b.us} at rank ${b.rank})`);
      if (b.rank === a.rank) continue;
      h.recordRange(a.us, b.us, b.rank - a.rank - 1);
      h.record(b.us, 1);
    }
    return h;
  }

  static fromSamples(us: readonly number[], subBucketBits = DEFAULT_SUB_BUCKET_BITS): LatencyHistogram {
    const h = new LatencyHistogram(subBucketBits);
    for (const v of us) h.record(v);
    return h;
  }

  #add(i: number, count: number, lo: number, hi: number, sum: number): void {
    this.#counts.set(i, (this.#counts.get(i) ?? 0) + count);
    this.#total += count;
    if (lo < this.#min) this.#min = lo;
    if (hi > this.#max) this.#max = hi;
    this.#sum += sum;
  }

  #sortedIndexes(): number[] {
    return [...this.#counts.keys()].sort((a, b) => a - b);
  }
}

/** Merges wire histograms (rounds, agents) into one; undefined for none. */
export function mergeHistograms(hs: readonly Histogram[]): LatencyHistogram | undefined {
  if (hs.length === 0) return undefined;
  const out = LatencyHistogram.fromProto(hs[0]!);
  for (const h of hs.slice(1)) out.merge(LatencyHistogram.fromProto(h));
  return out;
}
