/**
 * netperf 2.7.0: the reference study's TCP_RR and TCP_CRR client, against
 * netserver. The native tool for TCP_CRR (a new connection per transaction,
 * which sockperf and fortio cannot do) and the preferred one for TCP_RR where
 * a node has it (the image has it; scripts/setup.sh installs it on a dev box).
 *
 * Checked against netperf's source at the pinned commit (src/nettest_omni.c,
 * src/netlib.c):
 * - `-P 0` drops the banners; the omni test's `-k SELECTORS` prints one
 *   `NAME=value` line per selector, so a value can never land in the wrong
 *   field (the `-o` CSV is positional).
 * - Asking for any latency selector turns on netperf's per-transaction
 *   histogram (keep_histogram): 100 buckets per decade of whole microseconds.
 *   MIN/MAX are exact; P50/P90/P99 are the histogram's value at sample rank
 *   floor(p*N), interpolated inside a bucket and truncated to whole
 *   microseconds (within 1 µs below 100 µs, 10 µs below 1 ms).
 * - TRANSACTION_RATE is transactions per second whatever `-f` says; there is
 *   no selector for the count itself, so it is LOCAL_BYTES_RECVD /
 *   RESPONSE_SIZE (every completed transaction received one response), checked
 *   against TRANSACTION_RATE x ELAPSED_TIME.
 * - `-- -P ,PORT` fixes netserver's data port (the remote side only: a fixed
 *   local port would collide with TIME_WAIT and with TCP_CRR, whose client
 *   binds a new local port per connection). The control connection goes to
 *   `-p`; the data port is the control port + 1 (12865 -> 12866 by default),
 *   so a server behind a Service on its own ports (collector/runs/measure-phase.ts)
 *   gets its own data port too, which that Service fronts as a second port.
 *
 * netperf reports percentiles, not buckets: the histogram sent upstream is
 * rebuilt from its ranked points (min, p50, p90, p99, max) with the shared
 * LatencyHistogram.fromRankedPoints, as sockperf's is, so rounds merge as
 * histograms and percentiles are never averaged. Between two points the shape
 * is not known: p50/p90/p99 of the rebuilt histogram match netperf's to a
 * bucket, but anything above p99 (p99.9) is interpolated toward the max and is
 * not a netperf measurement.
 *
 * Failures: a refused control connection or a bad option prints netperf's
 * words on stdout and exits 255, so 255 reaches the parser, which turns it
 * into E_TOOL_FAILED; errors on the data connection (netserver gone, reset)
 * are perror lines on stderr with exit 1, reported by core/process.ts.
 */
import { CniBenchError, ErrorCodes, type FieldIssue, parseError, validationError } from '../../core/errors.js';
import { LatencyHistogram } from '../../core/histogram.js';
import { netserver as netserverFacts } from '../../core/tool-catalogue/netserver.js';
import type { Measurement, Percentile, RequestResponseResult } from '../../gen/cnibench/v1/agent.js';
import type { ClientDriver, ClientSpec } from './driver.js';
import { wholeSeconds } from './iperf3.js';

/** What the client asks netperf to print (`-- -k`), in netperf's own names. */
export const NETPERF_SELECTORS = [
  'THROUGHPUT',
  'THROUGHPUT_UNITS',
  'TRANSACTION_RATE',
  'ELAPSED_TIME',
  'MIN_LATENCY',
  'MEAN_LATENCY',
  'P50_LATENCY',
  'P90_LATENCY',
  'P99_LATENCY',
  'MAX_LATENCY',
  'STDDEV_LATENCY',
  'REQUEST_SIZE',
  'RESPONSE_SIZE',
  'LOCAL_BYTES_RECVD',
  'PROTOCOL',
  'DIRECTION',
] as const;
type Selector = (typeof NETPERF_SELECTORS)[number];

/** netserver's data port (the tool catalogue's, where Services and policies read it too). */
export const NETPERF_DATA_PORT = netserverFacts.server.dataPort;
const NETPERF_CONTROL_PORT = netserverFacts.server.port;
/** The data port a client names for a control port: the same distance as the defaults' (one above). */
export function netperfDataPort(controlPort: number): number {
  return controlPort + (NETPERF_DATA_PORT - NETPERF_CONTROL_PORT);
}
/** Largest request or response accepted (the scenario's own bound). */
export const NETPERF_MAX_MESSAGE_BYTES = 65_536;

const PERCENTILE_SELECTORS: readonly [number, Selector][] = [
  [50, 'P50_LATENCY'],
  [90, 'P90_LATENCY'],
  [99, 'P99_LATENCY'],
];
const DIRECTIONS: Readonly<Record<string, boolean>> = { 'Send|Recv': false, 'Connect|Send|Recv': true };
const TEXT_SELECTORS: ReadonlySet<Selector> = new Set(['THROUGHPUT_UNITS', 'PROTOCOL', 'DIRECTION']);
const KEYVAL = /^([A-Z0-9_]+)=(.*)$/;

/** TCP_RR or TCP_CRR message sizes for a spec; what netperf cannot do is a validation error naming the field. */
export function netperfMessageBytes(spec: ClientSpec): { request: number; response: number } {
  const issues: FieldIssue[] = [];
  if (spec.connections !== undefined && spec.connections !== 1)
    issues.push({
      path: 'connections',
      message: `netperf runs one connection at a time, got ${spec.connections}; use tool tcp-rr`,
    });
  const request = spec.requestBytes ?? 1;
  const response = spec.responseBytes ?? 1;
  for (const [path, n] of [
    ['requestBytes', request],
    ['responseBytes', response],
  ] as const) {
    if (!Number.isInteger(n) || n < 1 || n > NETPERF_MAX_MESSAGE_BYTES)
      issues.push({ path, message: `must be an integer in [1, ${NETPERF_MAX_MESSAGE_BYTES}], got ${n}` });
  }
  if (issues.length > 0) throw validationError(issues, 'netperf client spec');
  return { request, response };
}

/** `NAME=value` lines; anything else (netperf's own messages) is kept apart. */
function keyvals(text: string): { values: Map<string, string>; other: string[] } {
  const values = new Map<string, string>();
  const other: string[] = [];
  for (const line of text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)) {
    const m = KEYVAL.exec(line);
    if (m) values.set(m[1]!, m[2]!.trim());
    else other.push(line);
  }
  return { values, other };
}

interface NetperfFields {
  f: Record<Selector, number>;
  connectPerTransaction: boolean;
}

/** The selectors' values, checked; netperf's own messages (no keyvals at all) are E_TOOL_FAILED with its words. */
function readFields(stdout: string): NetperfFields {
  const { values, other } = keyvals(stdout);
  if (values.size === 0 && other.length > 0) {
    const reason = other.slice(0, 2).join(' ');
    throw new CniBenchError(ErrorCodes.TOOL_FAILED, `netperf: ${reason}`, { details: { tool: 'netperf', reason } });
  }
  if (values.size === 0) throw parseError('netperf', stdout, 'no output');
  // netperf ends every line; a capture cut mid-line could otherwise pass a shortened number.
  if (!stdout.endsWith('\n')) throw parseError('netperf', stdout, 'output does not end with a newline (cut short?)');
  const text = (k: Selector): string => {
    const v = values.get(k);
    if (v === undefined || v === '') throw parseError('netperf', stdout, `no ${k} (output cut short?)`);
    return v;
  };
  const num = (k: Selector): number => {
    const v = Number(text(k));
    if (!Number.isFinite(v) || v < 0) throw parseError('netperf', stdout, `${k} is not a non-negative number`);
    return v;
  };
  const f = Object.fromEntries(
    NETPERF_SELECTORS.filter((k) => !TEXT_SELECTORS.has(k)).map((k) => [k, num(k)]),
  ) as Record<Selector, number>;
  const connectPerTransaction = DIRECTIONS[text('DIRECTION')];
  if (connectPerTransaction === undefined || text('PROTOCOL') !== 'TCP')
    throw parseError(
      'netperf',
      stdout,
      `not a TCP_RR/TCP_CRR run (PROTOCOL ${text('PROTOCOL')}, DIRECTION ${text('DIRECTION')})`,
    );
  if (text('THROUGHPUT_UNITS') !== 'Trans/s')
    throw parseError('netperf', stdout, `THROUGHPUT_UNITS is ${text('THROUGHPUT_UNITS')}, not Trans/s`);
  if (f.RESPONSE_SIZE < 1) throw parseError('netperf', stdout, `RESPONSE_SIZE ${f.RESPONSE_SIZE}`);
  return { f, connectPerTransaction };
}

/**
 * Parses the keyval output of one netperf TCP_RR or TCP_CRR run. netperf's own
 * failure messages are E_TOOL_FAILED; missing selectors (output cut short),
 * inconsistent counts and a run with no transaction are errors too, never a
 * zero result.
 */
export function parseNetperfOutput(stdout: string): RequestResponseResult {
  const { f, connectPerTransaction } = readFields(stdout);
  const rate = f.TRANSACTION_RATE;
  const elapsed = f.ELAPSED_TIME;
  const n = Math.floor(f.LOCAL_BYTES_RECVD / f.RESPONSE_SIZE);
  if (n === 0 || rate === 0) {
    throw new CniBenchError(ErrorCodes.TOOL_FAILED, `netperf: no transaction completed in ${elapsed} s`, {
      details: { tool: 'netperf' },
    });
  }
  const seconds = n / rate;
  // ELAPSED_TIME is printed to 10 ms; the count must agree with the rate over it.
  if (!(elapsed > 0) || Math.abs(seconds - elapsed) > Math.max(0.011, 0.01 * elapsed)) {
    throw parseError(
      'netperf',
      stdout,
      `${n} transactions at ${rate}/s take ${seconds.toFixed(3)} s, not ELAPSED_TIME ${elapsed} s`,
    );
  }
  const histogram = histogramOf(f, n, stdout);
  return {
    connectPerTransaction,
    connections: 1,
    seconds,
    transactions: n,
    transactionsPerSecond: rate,
    // netperf stops at its first error (exit 1), so a parsed run had none.
    errors: 0,
    latency: {
      meanUs: f.MEAN_LATENCY,
      stdevUs: f.STDDEV_LATENCY,
      maxUs: f.MAX_LATENCY,
      percentiles: PERCENTILE_SELECTORS.map(([p, k]): Percentile => ({ percentile: p, valueUs: f[k] })),
    },
    histogram: histogram.toProto(),
  };
}

/**
 * netperf's ranked points as a histogram of n samples. Its percentiles are
 * interpolated inside 1%-of-a-decade buckets, so one may fall a little below
 * MIN or above MAX; they are clamped to [MIN, MAX] (a real sample lies in the
 * same bucket). A rank netperf rounds to 0 (fewer than 1/p samples) printed 0
 * and is left out.
 */
function histogramOf(f: Record<Selector, number>, n: number, stdout: string): LatencyHistogram {
  const clamp = (v: number): number => Math.min(f.MAX_LATENCY, Math.max(f.MIN_LATENCY, v));
  const points = [
    { rank: 1, us: f.MIN_LATENCY },
    ...PERCENTILE_SELECTORS.map(([p, k]) => ({ rank: Math.floor((p / 100) * n), us: clamp(f[k]) })),
    { rank: n, us: f.MAX_LATENCY },
  ].filter((p) => p.rank >= 1);
  const h = LatencyHistogram.fromRankedPoints(points, (reason) => parseError('netperf', stdout, reason));
  if (h.total !== n) throw parseError('netperf', stdout, `histogram holds ${h.total} of ${n} transactions`);
  return h;
}

export const netperf: ClientDriver = {
  tool: 'netperf',
  // 255 (exit(-1)): netperf's own message on stdout (refused control connection, bad option).
  okExitCodes: [0, 255],
  buildClientArgs(spec: ClientSpec): string[] {
    const { request, response } = netperfMessageBytes(spec);
    return [
      '-P',
      '0',
      '-t',
      spec.connectPerTransaction ? 'TCP_CRR' : 'TCP_RR',
      '-H',
      spec.targetHost,
      '-p',
      String(spec.targetPort),
      '-l',
      String(wholeSeconds(spec.durationSeconds)),
      '--',
      '-r',
      `${request},${response}`,
      '-P',
      `,${netperfDataPort(spec.targetPort)}`,
      '-k',
      NETPERF_SELECTORS.join(','),
    ];
  },
  parse(stdout: string, spec: ClientSpec): Measurement {
    const r = parseNetperfOutput(stdout);
    if (r.connectPerTransaction !== (spec.connectPerTransaction ?? false)) {
      throw parseError(
        'netperf',
        stdout,
        `ran ${r.connectPerTransaction ? 'TCP_CRR' : 'TCP_RR'}, asked for ${spec.connectPerTransaction ? 'TCP_CRR' : 'TCP_RR'}`,
      );
    }
    return { kind: { $case: 'rr', value: r } };
  },
};
