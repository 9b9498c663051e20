/**
 * The built-in fixed-rate HTTP load generator, agent/builtins/http-open-loop.ts,
 * run with the agent's own Node binary as its own process. It is the HTTP tool
 * for latency at a given rate: unlike fortio (see fortio.ts), it times every
 * request from its intended start in the schedule, so a stall of the target
 * shows as latency of all the requests that should have been sent during it
 * (coordinated omission corrected, `latencyFromIntendedStart` true). Its
 * numbers include Node's event loop; one process keeps about one core busy.
 */
import { CniBenchError, ErrorCodes, isCniBenchError, parseError } from '../../core/errors.js';
import { LatencyHistogram } from '../../core/histogram.js';
import { parseToolJson } from '../../core/tool-json.js';
import { Histogram, type HttpLoadResult, type Measurement, type SocketErrors } from '../../gen/cnibench/v1/agent.js';
import { builtinScript } from './builtin-args.js';
import type { ClientDriver, ClientSpec } from './driver.js';

const TOOL = 'http-open-loop';

/** Percentiles reported from the histogram. */
export const OPEN_LOOP_PERCENTILES: readonly number[] = [50, 90, 99, 99.9];

/** Error codes that mean the connection could not be set up; ETIMEDOUT is the client's own drain timeout. */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'EADDRNOTAVAIL',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRINUSE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const WRITE_CODES = new Set(['EPIPE']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT']);

type Json = Record<string, unknown>;

function num(doc: Json, key: string, stdout: string): number {
  const v = doc[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
    throw parseError(TOOL, stdout, `'${key}' is not a non-negative number`);
  return v;
}

function errorCounts(doc: Json, stdout: string): Record<string, number> {
  const raw = doc.errorsByCode;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw parseError(TOOL, stdout, "'errorsByCode' is not an object");
  return Object.fromEntries(Object.keys(raw).map((k) => [k, num(raw as Json, k, stdout)]));
}

/**
 * The client's error codes in the four proto buckets: refused/unreachable is
 * connect, EPIPE write, ETIMEDOUT (unanswered at the end) timeout, and
 * anything else (reset, hang-up, HTTP parse errors) read.
 */
export function socketErrorsOf(byCode: Record<string, number>): SocketErrors {
  const out: SocketErrors = { connect: 0, read: 0, write: 0, timeout: 0 };
  for (const [code, n] of Object.entries(byCode)) {
    if (CONNECT_CODES.has(code)) out.connect += n;
    else if (WRITE_CODES.has(code)) out.write += n;
    else if (TIMEOUT_CODES.has(code)) out.timeout += n;
    else out.read += n;
  }
  return out;
}

function histogramOf(doc: Json, stdout: string): LatencyHistogram {
  if (!doc.histogram || typeof doc.histogram !== 'object') throw parseError(TOOL, stdout, "no 'histogram' object");
  try {
    return LatencyHistogram.fromProto(Histogram.fromJSON(doc.histogram));
  } catch (err) {
    if (isCniBenchError(err, ErrorCodes.VALIDATION)) throw parseError(TOOL, stdout, err.message);
    throw err;
  }
}

function docOf(stdout: string): Json {
  const doc = parseToolJson(TOOL, stdout);
  if (!doc || typeof doc !== 'object' || Array.isArray(doc) || (doc as Json).tool !== TOOL) {
    throw parseError(TOOL, stdout, `not an object with tool '${TOOL}'`);
  }
  const d = doc as Json;
  if (typeof d.error === 'string')
    throw new CniBenchError(ErrorCodes.TOOL_FAILED, `${TOOL}: ${d.error}`, { details: { tool: TOOL } });
  return d;
}

/**
 * Parses the one JSON object the client prints. Inconsistent counts are
 * E_PARSE; a run with no response at all is E_TOOL_FAILED naming the error
 * codes, never a zero-latency result.
 */
export function parseHttpOpenLoopOutput(stdout: string): HttpLoadResult {
  const d = docOf(stdout);
  if (typeof d.keepalive !== 'boolean') throw parseError(TOOL, stdout, "'keepalive' is not a boolean");
  const [qps, connections, seconds, requests, sent, non2xx, errors] = [
    'qps',
    'connections',
    'seconds',
    'requests',
    'sent',
    'non2xx',
    'errors',
  ].map((k) => num(d, k, stdout)) as [number, number, number, number, number, number, number];
  const byCode = errorCounts(d, stdout);
  const sum = Object.values(byCode).reduce((a, b) => a + b, 0);
  if (sum !== errors) throw parseError(TOOL, stdout, `errorsByCode sums to ${sum}, not errors ${errors}`);
  if (requests + errors !== sent)
    throw parseError(TOOL, stdout, `${requests} responses and ${errors} errors do not add up to ${sent} sent`);
  if (non2xx > requests) throw parseError(TOOL, stdout, `non2xx ${non2xx} exceeds requests ${requests}`);
  const h = histogramOf(d, stdout);
  if (h.total !== requests)
    throw parseError(TOOL, stdout, `histogram holds ${h.total} values for ${requests} requests`);
  if (!(seconds > 0) || !(qps > 0)) throw parseError(TOOL, stdout, `run time ${seconds} s at ${qps} QPS`);
  if (requests === 0) {
    throw new CniBenchError(
      ErrorCodes.TOOL_FAILED,
      `${TOOL}: no HTTP response to ${sent} requests in ${seconds} s; errors: ${JSON.stringify(byCode)}`,
      {
        details: { tool: TOOL, errorsByCode: byCode },
      },
    );
  }
  return {
    connections,
    keepalive: d.keepalive,
    seconds,
    requests,
    requestsPerSecond: requests / seconds,
    non2xx,
    socketErrors: socketErrorsOf(byCode),
    latency: {
      meanUs: num(d, 'meanUs', stdout),
      stdevUs: num(d, 'stdevUs', stdout),
      maxUs: h.max,
      percentiles: OPEN_LOOP_PERCENTILES.map((p) => ({ percentile: p, valueUs: h.percentile(p) })),
    },
    histogram: h.toProto(),
    targetQps: qps,
    latencyFromIntendedStart: true,
    sendLagMeanUs: num(d, 'sendLagMeanUs', stdout),
  };
}

function targetQps(spec: ClientSpec): number {
  const qps = spec.qps;
  if (typeof qps !== 'number' || !Number.isFinite(qps) || qps <= 0) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `${TOOL}: qps must be > 0 (a fixed rate is the point of this tool), got ${String(qps)}`,
      {
        details: { field: 'qps', tool: TOOL },
      },
    );
  }
  return qps;
}

function httpPath(spec: ClientSpec): string {
  return spec.path?.startsWith('/') ? spec.path : `/${spec.path ?? ''}`;
}

const clientScript = builtinScript('http-open-loop');

export const httpOpenLoop: ClientDriver = {
  tool: TOOL,
  buildClientArgs(spec: ClientSpec): string[] {
    return [
      clientScript,
      '--host',
      spec.targetHost,
      '--port',
      String(spec.targetPort),
      '--path',
      httpPath(spec),
      '--duration',
      String(spec.durationSeconds),
      '--qps',
      String(targetQps(spec)),
      '--connections',
      String(spec.connections ?? 64),
      '--keepalive',
      spec.keepalive === false ? 'false' : 'true',
    ];
  },
  cpuThreads: () => 1,
  parse(stdout: string): Measurement {
    return { kind: { $case: 'http', value: parseHttpOpenLoopOutput(stdout) } };
  },
};
