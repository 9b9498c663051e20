/**
 * sockperf: native TCP request/response latency (netperf's TCP_RR) on nodes
 * where netperf is not packaged. `sockperf ping-pong --tcp` keeps ONE
 * connection open and runs a closed loop of message -> echo, timing every
 * round trip. It cannot open a connection per transaction, so TCP_CRR (and more
 * than one connection) is refused here; the built-in `tcp-rr` driver does both.
 *
 * Round trip, not one way: sockperf's default "latency" is each round trip
 * halved. We always pass `--full-rtt` so it prints round-trip times, the unit
 * of netperf TCP_RR; output without it (`avg-latency=`) is still accepted and
 * doubled, which is exact because sockperf halves every sample before it sorts.
 *
 * The histogram is approximate: sockperf prints only its min, max and nine
 * exact percentile points (sample rank round(p*N)) of N observations. Each
 * point is recorded as the one sample it is; the r2 - r1 - 1 samples strictly
 * between two points of ranks r1 < r2 are spread uniformly over [v1, v2) with
 * `recordRange`. Total, min, max and the printed points are exact; the shape
 * inside each interval is not (worst in the sparse tail above p99.9). The exact
 * percentiles are reported beside it in `latency`.
 *
 * sockperf reports its failures on stdout as `sockperf: ERROR: ...` and exits
 * 0 (connection refused) or 7 (SOCKPERF_ERR_SOCKET, peer closed mid-run); both
 * reach the parser, which turns them into E_TOOL_FAILED with sockperf's words.
 */
import { CniBenchError, ErrorCodes, type FieldIssue, parseError, validationError } from '../../core/errors.js';
import { LatencyHistogram } from '../../core/histogram.js';
import type { Measurement, Percentile, RequestResponseResult } from '../../gen/cnibench/v1/agent.js';
import type { ClientDriver, ClientSpec, ServerDriver, ServerSpec } from './driver.js';
import { wholeSeconds } from './iperf3.js';

/** sockperf messages carry a 14-byte header (sequence number, flags, length); smaller sizes are sent as 14. */
export const SOCKPERF_MIN_MESSAGE_BYTES = 14;
/** sockperf's MAX_PAYLOAD_SIZE (the server's default `-m`). */
export const SOCKPERF_MAX_MESSAGE_BYTES = 65507;

/** Request/response fields of ClientSpec this driver reads. */
type RrClientSpec = ClientSpec;

/** ANSI colour codes (ESC [ ... m); ESC written as a code so the pattern holds no raw control character. */
const ANSI = new RegExp(`${String.fromCharCode(0x1b)}\\[[0-9;]*m`, 'g');
const NUM = '(\\d+(?:\\.\\d+)?)';

function match(text: string, re: RegExp, stdout: string, what: string): RegExpExecArray {
  const m = re.exec(text);
  if (!m) throw parseError('sockperf', stdout, `no ${what}`);
  return m;
}

/** The sockperf message size for a spec: both directions carry the same message, at least 14 bytes. */
export function sockperfMessageBytes(spec: RrClientSpec): number {
  const issues: FieldIssue[] = [];
  if (spec.connectPerTransaction)
    issues.push({
      path: 'connectPerTransaction',
      message: 'sockperf keeps one connection; use tool tcp-rr for TCP_CRR',
    });
  if (spec.connections !== undefined && spec.connections !== 1)
    issues.push({ path: 'connections', message: `sockperf ping-pong runs one connection, got ${spec.connections}` });
  const req = spec.requestBytes ?? spec.responseBytes ?? SOCKPERF_MIN_MESSAGE_BYTES;
  if (spec.responseBytes !== undefined && spec.responseBytes !== req) {
    issues.push({
      path: 'responseBytes',
      message: `sockperf echoes the request, so responseBytes must equal requestBytes (${req}); use tool tcp-rr`,
    });
  }
  if (!Number.isInteger(req) || req < 1 || req > SOCKPERF_MAX_MESSAGE_BYTES) {
    issues.push({
      path: 'requestBytes',
      message: `must be an integer in [1, ${SOCKPERF_MAX_MESSAGE_BYTES}], got ${req}`,
    });
  }
  if (issues.length > 0) throw validationError(issues, 'sockperf client spec');
  return Math.max(SOCKPERF_MIN_MESSAGE_BYTES, req);
}

interface Point {
  rank: number;
  us: number;
}

/**
 * Parses `sockperf ping-pong` client output (one server) into a round-trip
 * result. Throws E_TOOL_FAILED for sockperf's own errors and E_PARSE for
 * anything incomplete, never a zero result.
 */
export function parseSockperfPingPong(stdout: string): RequestResponseResult {
  const text = stdout.replace(ANSI, '');
  const failed =
    /^.*sockperf: (ERROR: .*|'-[^']+' Invalid .*|No valid observations found.*|Test end before test start.*)$/m.exec(
      text,
    );
  if (failed) {
    const reason = failed[1]!.trim();
    throw new CniBenchError(ErrorCodes.TOOL_FAILED, `sockperf: ${reason}`, { details: { tool: 'sockperf', reason } });
  }
  const valid = [
    ...text.matchAll(
      new RegExp(`\\[Valid Duration\\] RunTime=${NUM} sec; SentMessages=(\\d+); ReceivedMessages=(\\d+)`, 'g'),
    ),
  ];
  if (valid.length !== 1)
    throw parseError('sockperf', stdout, `expected one '[Valid Duration]' line, found ${valid.length}`);
  const avg = match(text, new RegExp(`====> avg-(rtt|latency)=${NUM} \\(std-dev=${NUM}`), stdout, "'avg-rtt=' line");
  const drops = match(
    text,
    /# dropped messages = (\d+); # duplicated messages = (\d+); # out-of-order messages = (\d+)/,
    stdout,
    "'dropped messages' line",
  );
  const total = match(text, /Total (\d+) observations/, stdout, "'Total N observations' line");
  const max = match(text, new RegExp(`---> <MAX> observation =\\s*${NUM}`), stdout, '<MAX> observation');
  const min = match(
    text,
    new RegExp(`---> <MIN> observation =\\s*${NUM}`),
    stdout,
    '<MIN> observation (output cut short?)',
  );
  const pct = [...text.matchAll(new RegExp(`---> percentile\\s+${NUM} =\\s*${NUM}`, 'g'))];
  if (pct.length === 0) throw parseError('sockperf', stdout, "no '---> percentile' lines");

  const received = Number(valid[0]![3]);
  const n = Number(total[1]);
  if (n !== received || n === 0)
    throw parseError('sockperf', stdout, `observations (${n}) do not match received messages (${received})`);
  // Without --full-rtt every sample was halved before sorting; doubling restores round trips exactly.
  const scale = avg[1] === 'latency' ? 2 : 1;
  const us = (s: string | undefined): number => Number(s) * scale;

  const percentiles: Percentile[] = pct
    .map((m) => ({ percentile: Number(m[1]), valueUs: us(m[2]) }))
    .sort((a, b) => a.percentile - b.percentile);
  // sockperf prints sorted[(int)(0.5 + p*N) - 1], i.e. the sample of rank floor(0.5 + p*N).
  const points: Point[] = [
    { rank: 1, us: us(min[1]) },
    ...percentiles.map((p) => ({ rank: Math.floor(0.5 + (p.percentile / 100) * n), us: p.valueUs })),
    { rank: n, us: us(max[1]) },
  ].filter((p) => p.rank >= 1 && p.rank <= n);
  const histogram = LatencyHistogram.fromRankedPoints(points, (reason) => parseError('sockperf', stdout, reason));
  if (histogram.total !== n)
    throw parseError('sockperf', stdout, `histogram holds ${histogram.total} of ${n} observations`);

  const seconds = Number(valid[0]![1]);
  if (!(seconds > 0)) throw parseError('sockperf', stdout, `valid run time ${seconds} s`);
  return {
    connectPerTransaction: false,
    connections: 1,
    seconds,
    transactions: received,
    transactionsPerSecond: received / seconds,
    errors: Number(drops[1]) + Number(drops[2]) + Number(drops[3]),
    latency: { meanUs: us(avg[2]), stdevUs: us(avg[3]), maxUs: us(max[1]), percentiles },
    histogram: histogram.toProto(),
  };
}

export const sockperf: ClientDriver & ServerDriver = {
  tool: 'sockperf',
  okExitCodes: [0, 7],
  buildClientArgs(spec: ClientSpec): string[] {
    const bytes = sockperfMessageBytes(spec);
    return [
      'ping-pong',
      '--tcp',
      '-i',
      spec.targetHost,
      '-p',
      String(spec.targetPort),
      // -t takes whole seconds; the first 400 ms are warm-up and not measured.
      '-t',
      String(wholeSeconds(spec.durationSeconds)),
      '-m',
      String(bytes),
      '--full-rtt',
    ];
  },
  buildServerArgs(spec: ServerSpec): string[] {
    return ['server', '--tcp', '-i', '0.0.0.0', '-p', String(spec.port)];
  },
  parse(stdout: string): Measurement {
    return { kind: { $case: 'rr', value: parseSockperfPingPong(stdout) } };
  },
};
