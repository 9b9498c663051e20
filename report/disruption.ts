/**
 * Disruption timelines: what a steady open-loop probe stream (a new
 * connection and a request on a kept connection, each at a fixed rate, every
 * attempt timestamped at its intended start) saw while an event happened to
 * the dataplane (its agent restarting, N Services added at once, an endpoint
 * removed). Attempts go into 100 ms bins (attempts, errors by reason, a latency
 * histogram per bin, merged, never averaged); the summary says how many
 * attempts failed from the event on, and how long after the event the error
 * rate and p99 stayed away from what they were before it. Pure: the probe
 * (agent/builtins/probe-stream.ts) bins, the report summarises and renders.
 */
import { CniBenchError, ErrorCodes, parseError } from '../core/errors.js';
import { LatencyHistogram, mergeHistograms } from '../core/histogram.js';
import { Histogram, type ProbeKindBin, type ProbeTimeline } from '../gen/cnibench/v1/agent.js';

export const PROBE_KINDS = ['new', 'kept'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];

export interface Attempt {
  /** Intended start, ms from the stream's start (open loop: late sends still count from here). */
  atMs: number;
  kind: ProbeKind;
  /** Latency from the intended start, µs; absent when it failed. */
  latencyUs?: number;
  /** Error reason (ECONNREFUSED, ETIMEDOUT, ECONNRESET, EOF, ...); absent when it succeeded. */
  reason?: string;
}

export interface KindBin {
  attempts: number;
  errors: Record<string, number>;
  /** Latency of the successful attempts, µs. */
  histogram: Histogram;
}

export interface Timeline {
  /** Wall clock (ms since the epoch) of the stream's t = 0, to place events on it. */
  startMs: number;
  binMs: number;
  /** Attempts per second of each kind. */
  rate: number;
  /** Long-lived connections the kept requests went round (0: not said). */
  kept?: number;
  bins: Record<ProbeKind, KindBin>[];
}

/** Pure: attempts into `binMs` bins by intended start, over `durationMs`. */
export function binAttempts(attempts: readonly Attempt[], binMs: number, durationMs: number): Timeline['bins'] {
  const n = Math.max(1, Math.ceil(durationMs / binMs));
  const hs = Array.from({ length: n }, () => ({ new: new LatencyHistogram(), kept: new LatencyHistogram() }));
  const bins = Array.from({ length: n }, () => ({
    new: { attempts: 0, errors: {} as Record<string, number> },
    kept: { attempts: 0, errors: {} as Record<string, number> },
  }));
  for (const a of attempts) {
    const i = Math.min(n - 1, Math.max(0, Math.floor(a.atMs / binMs)));
    const b = (bins[i] as (typeof bins)[number])[a.kind];
    b.attempts++;
    if (a.reason !== undefined) b.errors[a.reason] = (b.errors[a.reason] ?? 0) + 1;
    else (hs[i] as (typeof hs)[number])[a.kind].record(a.latencyUs ?? 0);
  }
  return bins.map((b, i) => ({
    new: { ...b.new, histogram: (hs[i] as (typeof hs)[number]).new.toProto() },
    kept: { ...b.kept, histogram: (hs[i] as (typeof hs)[number]).kept.toProto() },
  }));
}

const errorsOf = (b: KindBin): number => Object.values(b.errors).reduce((a, v) => a + v, 0);

/** Parses the one JSON line probe-stream prints; its own failure is E_TOOL_FAILED, a malformed line E_PARSE. */
export function parseTimeline(stdout: string): Timeline {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(stdout.trim().split('\n').at(-1) ?? '');
  } catch {
    throw parseError('probe-stream', stdout, 'not one JSON line');
  }
  if (doc?.tool !== 'probe-stream') throw parseError('probe-stream', stdout, "not an object with tool 'probe-stream'");
  if (typeof doc.error === 'string') throw new CniBenchError(ErrorCodes.TOOL_FAILED, `probe-stream: ${doc.error}`);
  const num = (k: string) => {
    const v = doc[k];
    if (typeof v !== 'number' || !(v >= 0)) throw parseError('probe-stream', stdout, `'${k}' is not a number >= 0`);
    return v;
  };
  if (!Array.isArray(doc.bins) || doc.bins.length === 0) throw parseError('probe-stream', stdout, "no 'bins'");
  const bins = (doc.bins as Record<string, unknown>[]).map((b, i) => {
    const kind = (k: ProbeKind): KindBin => {
      const x = b?.[k] as Record<string, unknown> | undefined;
      if (!x || typeof x.attempts !== 'number' || typeof x.errors !== 'object' || !x.histogram)
        throw parseError('probe-stream', stdout, `bin ${i}: '${k}' lacks attempts, errors or histogram`);
      const h = Histogram.fromJSON(x.histogram);
      const kb = { attempts: x.attempts, errors: x.errors as Record<string, number>, histogram: h };
      if (h.total + errorsOf(kb) !== kb.attempts)
        throw parseError('probe-stream', stdout, `bin ${i} '${k}': ${h.total} ok + errors != ${kb.attempts} attempts`);
      return kb;
    };
    return { new: kind('new'), kept: kind('kept') };
  });
  const kept = typeof doc.kept === 'number' && doc.kept >= 0 ? { kept: doc.kept } : {};
  return { startMs: num('startMs'), binMs: num('binMs'), rate: num('rate'), ...kept, bins };
}

/** The timeline as the agent sends it to the collector (JobResult.measurement.disruption). Pure. */
export function timelineToProto(t: Timeline): ProbeTimeline {
  const kind = (b: KindBin): ProbeKindBin => ({
    attempts: b.attempts,
    errors: { ...b.errors },
    histogram: b.histogram,
  });
  return {
    startMs: t.startMs,
    binMs: t.binMs,
    rate: t.rate,
    keptConnections: t.kept ?? 0,
    bins: t.bins.map((b) => ({ newConnections: kind(b.new), keptConnections: kind(b.kept) })),
  };
}

/** Back from the wire; a bin without its two kinds is E_PARSE naming probe-stream. Pure. */
export function timelineFromProto(p: ProbeTimeline): Timeline {
  const kind = (k: ProbeKindBin | undefined, i: number): KindBin => {
    if (!k?.histogram) throw parseError('probe-stream', JSON.stringify(p).slice(0, 200), `bin ${i} lacks a kind`);
    return { attempts: k.attempts, errors: { ...k.errors }, histogram: k.histogram };
  };
  return {
    startMs: Number(p.startMs),
    binMs: p.binMs,
    rate: p.rate,
    kept: p.keptConnections,
    bins: p.bins.map((b, i) => ({ new: kind(b.newConnections, i), kept: kind(b.keptConnections, i) })),
  };
}

export interface KindSummary {
  kind: ProbeKind;
  /** Before the event: error share and p99 (µs) of the merged bins. */
  baseline: { errorShare: number; p99Us: number | null; attempts: number };
  /** From the event's bin on. */
  attemptsAfter: number;
  errorsAfter: number;
  errorsByReason: Record<string, number>;
  /** ms from the event to the start of the first failed attempt's bin; null without failures. */
  firstErrorMs: number | null;
  /**
   * ms from the event until the error share and p99 were back at the baseline
   * for good: the end of the last bin after the event that was worse (an error
   * share above twice the baseline's, or a slow p99); 0 when no bin was. A
   * p99 is slow above `p99Factor` times the baseline's and at least
   * P99_FLOOR_US above it, judged over the bin and the bins after it until
   * they hold P99_MIN_SAMPLES latencies: a 100 ms bin at 100/s holds 10, and
   * the "p99" of 10 is their maximum, which one scheduler hiccup sets (seen:
   * "back at baseline" 0.5 to 16.7 s after restarts that failed nothing).
   */
  recoveredAfterMs: number;
  /** False when the last bin of the stream was still worse than the baseline: not back before the stream ended. */
  recovered: boolean;
  /** The thresholds used. */
  thresholds: { errorShare: number; p99Us: number | null };
}

export interface DisruptionSummary {
  eventAtMs: number;
  kinds: KindSummary[];
}

/** Latencies a p99 is judged over after the event (the bin and as many following bins as that takes). */
export const P99_MIN_SAMPLES = 100;
/** A p99 this close to the baseline's is never slow, whatever the factor (lab baselines are a few hundred µs). */
export const P99_FLOOR_US = 1000;

function p99(bins: readonly KindBin[]): number | null {
  const m = mergeHistograms(bins.map((b) => b.histogram).filter((h) => h.total > 0));
  return m && m.total > 0 ? m.percentile(99) : null;
}

/**
 * Pure: the summary of a timeline around an event at `eventAtMs` (ms from the
 * stream's start). At least one bin must precede the event (the baseline).
 */
export function summariseDisruption(t: Timeline, eventAtMs: number, p99Factor = 2): DisruptionSummary {
  const first = Math.floor(eventAtMs / t.binMs);
  if (first < 1 || first >= t.bins.length)
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `event at ${eventAtMs} ms is not inside the timeline after its first bin (${t.bins.length} × ${t.binMs} ms)`,
      { details: { field: 'eventAtMs' } },
    );
  const kinds = PROBE_KINDS.map((kind): KindSummary => {
    const before = t.bins.slice(0, first).map((b) => b[kind]);
    const after = t.bins.slice(first).map((b) => b[kind]);
    const attempts = before.reduce((a, b) => a + b.attempts, 0);
    const errorShare = attempts ? before.reduce((a, b) => a + errorsOf(b), 0) / attempts : 0;
    const baseP99 = p99(before);
    const thresholds = {
      errorShare: 2 * errorShare,
      p99Us: baseP99 === null ? null : Math.max(p99Factor * baseP99, baseP99 + P99_FLOOR_US),
    };
    // The bin and the ones after it; near the stream's end, the ones before it too.
    const windowOf = (j: number): KindBin[] => {
      const out: KindBin[] = [];
      let n = 0;
      for (let i = j; i < after.length && n < P99_MIN_SAMPLES; i++) {
        out.push(after[i] as KindBin);
        n += (after[i] as KindBin).histogram.total;
      }
      for (let i = j - 1; i >= 0 && n < P99_MIN_SAMPLES; i--) {
        out.push(after[i] as KindBin);
        n += (after[i] as KindBin).histogram.total;
      }
      return out;
    };
    const byReason: Record<string, number> = {};
    let firstError: number | null = null;
    let lastBad = -1;
    for (const [j, b] of after.entries()) {
      const e = errorsOf(b);
      for (const [r, n] of Object.entries(b.errors)) byReason[r] = (byReason[r] ?? 0) + n;
      if (e > 0 && firstError === null) firstError = j;
      const share = b.attempts ? e / b.attempts : 0;
      const windowP99 = b.histogram.total > 0 ? p99(windowOf(j)) : null;
      const slow = thresholds.p99Us !== null && windowP99 !== null && windowP99 > thresholds.p99Us;
      if (share > thresholds.errorShare || slow) lastBad = j;
    }
    const binStart = (j: number) => (first + j) * t.binMs;
    return {
      kind,
      baseline: { errorShare, p99Us: baseP99, attempts },
      attemptsAfter: after.reduce((a, b) => a + b.attempts, 0),
      errorsAfter: after.reduce((a, b) => a + errorsOf(b), 0),
      errorsByReason: byReason,
      firstErrorMs: firstError === null ? null : Math.max(0, binStart(firstError) - eventAtMs),
      recoveredAfterMs: lastBad < 0 ? 0 : binStart(lastBad) + t.binMs - eventAtMs,
      recovered: lastBad < after.length - 1,
      thresholds,
    };
  });
  return { eventAtMs, kinds };
}
