/**
 * The built-in TCP request/response pair: agent/clients/tcp-rr.ts against
 * agent/servers/tcp-echo.ts, both run with the agent's own Node binary as their
 * own processes. It is the fallback on nodes without a native tool and the only
 * tool here for TCP_CRR (a new connection per transaction), which sockperf
 * cannot do. Its numbers include Node's event loop on both ends; compare them
 * with sockperf's before reading small differences as dataplane cost.
 *
 * Wire format (shared by client and server, so it lives in this pure module):
 * every connection starts with a 16-byte preamble sent in the same write as
 * the first request, so it costs no extra round trip:
 *   0..3 "CBRR" | 4 version 1 | 5 flags (bit 0: server closes after one
 *   response, TCP_CRR) | 6..7 zero | 8..11 request bytes | 12..15 response
 *   bytes (unsigned 32-bit big-endian).
 * One server thus serves any mix of sizes and modes without being configured.
 */
import { fileURLToPath } from 'node:url';
import { CniBenchError, ErrorCodes, isCniBenchError, parseError } from '../../core/errors.js';
import { LatencyHistogram } from '../../core/histogram.js';
import { parseToolJson } from '../../core/tool-json.js';
import { Histogram, type Measurement, type RequestResponseResult } from '../../gen/cnibench/v1/agent.js';
import type { ClientDriver, ClientSpec, ServerDriver, ServerSpec } from './driver.js';

/** Request/response fields of ClientSpec this driver reads. */
type RrClientSpec = ClientSpec;

export const RR_PREAMBLE_BYTES = 16;
/** Largest request or response either side accepts (a bound on the server's memory per connection). */
export const RR_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Percentiles reported from the histogram (netperf's usual set). */
export const RR_PERCENTILES: readonly number[] = [50, 90, 99, 99.9];

const MAGIC = 'CBRR';
const VERSION = 1;
const FLAG_CLOSE = 1;

export interface RrPreamble {
  requestBytes: number;
  responseBytes: number;
  /** TCP_CRR: the server answers once, then closes (it closes first, as netperf's netserver does). */
  closeAfterResponse: boolean;
}

function checkSize(n: number, what: string): void {
  if (!Number.isInteger(n) || n < 1 || n > RR_MAX_MESSAGE_BYTES) throw new Error(`${what} must be an integer in [1, ${RR_MAX_MESSAGE_BYTES}], got ${n}`);
}

export function encodeRrPreamble(p: RrPreamble): Buffer {
  checkSize(p.requestBytes, 'request bytes');
  checkSize(p.responseBytes, 'response bytes');
  const b = Buffer.alloc(RR_PREAMBLE_BYTES);
  b.write(MAGIC, 0, 'latin1');
  b[4] = VERSION;
  b[5] = p.closeAfterResponse ? FLAG_CLOSE : 0;
  b.writeUInt32BE(p.requestBytes, 8);
  b.writeUInt32BE(p.responseBytes, 12);
  return b;
}

/** Throws a plain Error on anything that is not a version-1 preamble (the server drops such connections). */
export function decodeRrPreamble(b: Buffer): RrPreamble {
  if (b.length < RR_PREAMBLE_BYTES) throw new Error(`preamble needs ${RR_PREAMBLE_BYTES} bytes, got ${b.length}`);
  if (b.toString('latin1', 0, 4) !== MAGIC || b[4] !== VERSION) throw new Error('not a tcp-rr version 1 preamble');
  const p = { requestBytes: b.readUInt32BE(8), responseBytes: b.readUInt32BE(12), closeAfterResponse: ((b[5] ?? 0) & FLAG_CLOSE) !== 0 };
  checkSize(p.requestBytes, 'request bytes');
  checkSize(p.responseBytes, 'response bytes');
  return p;
}

function num(doc: Record<string, unknown>, key: string, stdout: string): number {
  const v = doc[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw parseError('tcp-rr', stdout, `'${key}' is not a non-negative number`);
  return v;
}

function errorCounts(doc: Record<string, unknown>, stdout: string): Record<string, number> {
  const raw = doc.errorsByCode;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw parseError('tcp-rr', stdout, "'errorsByCode' is not an object");
  return Object.fromEntries(Object.keys(raw).map((k) => [k, num(raw as Record<string, unknown>, k, stdout)]));
}

function histogramOf(doc: Record<string, unknown>, stdout: string): LatencyHistogram {
  if (!doc.histogram || typeof doc.histogram !== 'object') throw parseError('tcp-rr', stdout, "no 'histogram' object");
  try {
    return LatencyHistogram.fromProto(Histogram.fromJSON(doc.histogram));
  } catch (err) {
    if (isCniBenchError(err, ErrorCodes.VALIDATION)) throw parseError('tcp-rr', stdout, err.message);
    throw err;
  }
}

/**
 * Parses the one JSON object the built-in client prints. Its own failure
 * (`{"error": ...}`, e.g. never connected) and a run in which no transaction
 * completed are E_TOOL_FAILED; malformed or inconsistent output is E_PARSE.
 */
export function parseTcpRrOutput(stdout: string): RequestResponseResult {
  const doc = parseToolJson('tcp-rr', stdout);
  if (!doc || typeof doc !== 'object' || Array.isArray(doc) || (doc as Record<string, unknown>).tool !== 'tcp-rr') {
    throw parseError('tcp-rr', stdout, "not an object with tool 'tcp-rr'");
  }
  const d = doc as Record<string, unknown>;
  if (typeof d.error === 'string') {
    throw new CniBenchError(ErrorCodes.TOOL_FAILED, `tcp-rr: ${d.error}`, { details: { tool: 'tcp-rr', errorsByCode: d.errorsByCode } });
  }
  if (typeof d.connectPerTransaction !== 'boolean') throw parseError('tcp-rr', stdout, "'connectPerTransaction' is not a boolean");
  const connections = num(d, 'connections', stdout);
  const seconds = num(d, 'seconds', stdout);
  const transactions = num(d, 'transactions', stdout);
  const errors = num(d, 'errors', stdout);
  const byCode = errorCounts(d, stdout);
  const sum = Object.values(byCode).reduce((a, b) => a + b, 0);
  if (sum !== errors) throw parseError('tcp-rr', stdout, `errorsByCode sums to ${sum}, not errors ${errors}`);
  const h = histogramOf(d, stdout);
  if (h.total !== transactions) throw parseError('tcp-rr', stdout, `histogram holds ${h.total} values for ${transactions} transactions`);
  if (transactions === 0) {
    throw new CniBenchError(ErrorCodes.TOOL_FAILED, `tcp-rr: no transaction completed in ${seconds} s; errors: ${JSON.stringify(byCode)}`, {
      details: { tool: 'tcp-rr', errorsByCode: byCode },
    });
  }
  if (!(seconds > 0)) throw parseError('tcp-rr', stdout, `run time ${seconds} s`);
  return {
    connectPerTransaction: d.connectPerTransaction,
    connections,
    seconds,
    transactions,
    transactionsPerSecond: transactions / seconds,
    errors,
    latency: {
      meanUs: num(d, 'meanUs', stdout),
      stdevUs: num(d, 'stdevUs', stdout),
      maxUs: h.max,
      percentiles: RR_PERCENTILES.map((p) => ({ percentile: p, valueUs: h.percentile(p) })),
    },
    histogram: h.toProto(),
  };
}

const clientScript = fileURLToPath(new URL('../clients/tcp-rr.js', import.meta.url));
const serverScript = fileURLToPath(new URL('../servers/tcp-echo.js', import.meta.url));

export const tcpRr: ClientDriver = {
  tool: 'tcp-rr',
  binary: process.execPath,
  kind: 'rr',
  // Exit 1 comes with a JSON {"error"} on stdout (never connected), which the parser reports.
  okExitCodes: [0, 1],
  buildClientArgs(spec: ClientSpec): string[] {
    const s: RrClientSpec = spec;
    return [
      clientScript,
      '--host', s.targetHost,
      '--port', String(s.targetPort),
      '--duration', String(s.durationSeconds),
      '--connections', String(s.connections ?? 1),
      '--request-bytes', String(s.requestBytes ?? 1),
      '--response-bytes', String(s.responseBytes ?? 1),
      ...(s.connectPerTransaction ? ['--crr'] : []),
    ];
  },
  parse(stdout: string): Measurement {
    return { kind: { $case: 'rr', value: parseTcpRrOutput(stdout) } };
  },
};

export const tcpEcho: ServerDriver = {
  tool: 'tcp-echo',
  binary: process.execPath,
  buildServerArgs(spec: ServerSpec): string[] {
    return [serverScript, '--port', String(spec.port)];
  },
};
