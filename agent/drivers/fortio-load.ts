/**
 * What fortio's two drivers (fortio.ts: HTTP, fortio-tcp.ts: TCP_RR) share:
 * the `fortio load` arguments and the common part of its `-json -` report.
 * fortio is the load generator the reference study used.
 *
 * Flags, checked against fortio 1.68.2's source:
 * - `-qps -1` is maximum rate: fortio turns any qps <= 0 into -1, and with it
 *   every connection sends its next request as soon as the last one returns.
 * - `-qps N` is N per second in total, split evenly over the connections, with
 *   `-uniform` so the connections' schedules are staggered instead of firing
 *   together. When a request comes back late fortio catches up (the default,
 *   no `-nocatchup`): the next ones are sent back to back until the schedule is
 *   met again, and a connection that cannot keep up stops at the deadline with
 *   fewer calls (ActualQPS below RequestedQPS shows it). Each connection has one
 *   request outstanding at a time, and latency is timed from when a request was
 *   really sent, not from its slot in the schedule: fortio does not correct for
 *   coordinated omission, so `latencyFromIntendedStart` is false.
 * - `-r 0.00001`: fortio's histogram buckets are multiples of this resolution
 *   (1..11, 12..20 by 2, ... up to 100000), so 10 µs gives buckets of 10 µs near
 *   the bottom, at most ~20% wide from 100 µs to 10 ms, and covers up to 1 s;
 *   the default (1 ms) would put a whole in-cluster run in one bucket.
 * - `-allow-initial-errors`: without it a run aborts (exit 1, no report) when a
 *   warm-up request gets a non-2xx answer; with it error statuses are counted
 *   like wrk counts them. A run in which nothing was answered is still an error.
 * - `-loglevel Critical`: fortio logs every failed connect; a refused target at
 *   ~30k attempts/s would fill stderr by megabytes per second.
 * - `-keepalive=false` (HTTP only) opens one connection per request (the
 *   study's "short connection" mode). For tcp:// the flag is ignored: fortio's
 *   TCP client keeps one connection per `-c` and reconnects only after an
 *   error (a 105,251-transaction run with -keepalive=false and -c 4 used 4 sockets), so
 *   TCP_CRR cannot be measured with fortio and is refused here.
 */
import { CniBenchError, ErrorCodes, parseError } from '../../core/errors.js';
import { LatencyHistogram } from '../../core/histogram.js';
import { parseToolJson } from '../../core/tool-json.js';
import type { Histogram, Latency } from '../../gen/cnibench/v1/agent.js';
import type { ClientSpec } from './driver.js';
import { wholeSeconds } from './iperf3.js';

/** Percentiles asked of fortio (`-p`), the same set wrk reports plus 99.9. */
export const FORTIO_PERCENTILES = [50, 75, 90, 99, 99.9] as const;

/** fortio's RetCodes key for any transport failure (connect, write, read, timeout). */
export const SOCKET_ERROR = '-1';

export type Json = Record<string, unknown>;

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Requests per second in total asked for; 0 or absent is maximum rate. */
function targetQps(spec: ClientSpec): number {
  const qps = spec.qps ?? 0;
  if (!Number.isFinite(qps) || qps < 0) {
    throw new CniBenchError(ErrorCodes.VALIDATION, `fortio: qps must be >= 0 (0 = maximum rate), got ${String(qps)}`, {
      details: { field: 'qps' },
    });
  }
  return qps;
}

/** Arguments shared by the HTTP and TCP clients, before the target URL. */
export function loadArgs(spec: ClientSpec): string[] {
  const qps = targetQps(spec);
  return [
    'load',
    '-json',
    '-',
    '-c',
    String(spec.connections ?? 64),
    '-t',
    `${wholeSeconds(spec.durationSeconds)}s`,
    '-qps',
    qps > 0 ? String(qps) : '-1',
    ...(qps > 0 ? ['-uniform'] : []),
    '-r',
    '0.00001',
    '-p',
    FORTIO_PERCENTILES.join(','),
    '-timeout',
    '5s',
    '-allow-initial-errors',
    '-log-errors=false',
    '-loglevel',
    'Critical',
  ];
}

/** The report's common part: run length, connections, rate asked, latency. */
export interface FortioRun {
  seconds: number;
  connections: number;
  targetQps: number;
  calls: number;
  retCodes: Record<string, number>;
  latency: Latency;
  histogram: Histogram;
  doc: Json;
}

function secondsToUs(s: number): number {
  return s * 1e6;
}

/**
 * fortio's DurationHistogram.Data (buckets `]Start, End]` in seconds) spread
 * into our histogram. The first bucket starts at the run's Min and the last
 * ends at its Max, both real observations, so those two are recorded exactly
 * (our min and max then match fortio's) and the rest spread evenly.
 */
export function fortioBucketsToHistogram(data: unknown): Histogram {
  if (!Array.isArray(data)) throw new Error('DurationHistogram.Data is not an array');
  const h = new LatencyHistogram();
  for (const [i, b] of data.entries()) {
    const start = num(isObject(b) ? b.Start : undefined);
    const end = num(isObject(b) ? b.End : undefined);
    const count = num(isObject(b) ? b.Count : undefined);
    if (start === undefined || end === undefined || count === undefined || start < 0 || !Number.isInteger(count)) {
      throw new Error(`DurationHistogram.Data[${i}] is not {Start, End, Count}`);
    }
    // Start and End are products of the resolution and may differ by float rounding only.
    const [low, high] = [secondsToUs(start), secondsToUs(Math.max(start, end))];
    let rest = count;
    if (i === 0 && rest > 0) {
      h.record(low);
      rest -= 1;
    }
    if (i === data.length - 1 && rest > 0) {
      h.record(high);
      rest -= 1;
    }
    h.recordRange(low, high, rest);
  }
  return h.toProto();
}

export function parseFortioRun(tool: string, stdout: string): FortioRun {
  const doc = parseToolJson(tool, stdout);
  if (!isObject(doc)) throw parseError(tool, stdout, 'not a JSON object');
  const dh = doc.DurationHistogram;
  const durationNs = num(doc.ActualDuration);
  const connections = num(doc.NumThreads);
  const requested = doc.RequestedQPS;
  if (
    !isObject(dh) ||
    durationNs === undefined ||
    connections === undefined ||
    typeof requested !== 'string' ||
    !isObject(doc.RetCodes)
  ) {
    throw parseError(tool, stdout, 'missing DurationHistogram, ActualDuration, NumThreads, RequestedQPS or RetCodes');
  }
  const calls = num(dh.Count);
  const mean = num(dh.Avg);
  const stdev = num(dh.StdDev);
  const max = num(dh.Max);
  const qps = requested === 'max' ? 0 : Number(requested);
  if (calls === undefined || mean === undefined || stdev === undefined || max === undefined || !Number.isFinite(qps)) {
    throw parseError(tool, stdout, 'DurationHistogram lacks Count/Avg/StdDev/Max, or RequestedQPS is not a number');
  }
  const retCodes: Record<string, number> = {};
  for (const [code, n] of Object.entries(doc.RetCodes)) {
    const v = num(n);
    if (v === undefined) throw parseError(tool, stdout, `RetCodes[${code}] is not a number`);
    retCodes[code] = v;
  }
  try {
    const percentiles = (calls === 0 ? [] : ((dh.Percentiles as unknown[] | undefined) ?? [])).map((p, i) => {
      const percentile = num(isObject(p) ? p.Percentile : undefined);
      const value = num(isObject(p) ? p.Value : undefined);
      if (percentile === undefined || value === undefined)
        throw new Error(`Percentiles[${i}] is not {Percentile, Value}`);
      return { percentile, valueUs: secondsToUs(value) };
    });
    return {
      seconds: durationNs / 1e9,
      connections,
      targetQps: qps,
      calls,
      retCodes,
      latency: { meanUs: secondsToUs(mean), stdevUs: secondsToUs(stdev), maxUs: secondsToUs(max), percentiles },
      histogram: fortioBucketsToHistogram(dh.Data ?? []),
      doc,
    };
  } catch (err) {
    throw parseError(tool, stdout, (err as Error).message);
  }
}

export function failed(tool: string, message: string, retCodes: Record<string, number>): CniBenchError {
  return new CniBenchError(ErrorCodes.TOOL_FAILED, `${tool}: ${message}`, { details: { tool, retCodes } });
}
