/**
 * Driver of the built-in TCP request/response client, agent/builtins/tcp-rr.ts
 * (against agent/builtins/tcp-echo.ts), run with the agent's own Node binary
 * as its own process. It is the fallback on nodes without a native tool and
 * the tool for TCP_CRR over many connections or through a Service, which
 * netperf cannot do. Its numbers include Node's event loop on both ends;
 * compare them with sockperf's or netperf's before reading small differences
 * as dataplane cost.
 */
import { CniBenchError, ErrorCodes, isCniBenchError, parseError } from '../../core/errors.js';
import { LatencyHistogram } from '../../core/histogram.js';
import { parseToolJson } from '../../core/tool-json.js';
import { Histogram, type Measurement, type RequestResponseResult } from '../../gen/cnibench/v1/agent.js';
import { builtinClientArgs, builtinScript } from './builtin-args.js';
import type { ClientDriver, ClientSpec } from './driver.js';

/** Request/response fields of ClientSpec this driver reads. */
type RrClientSpec = ClientSpec;

/** Percentiles reported from the histogram (netperf's usual set). */
export const RR_PERCENTILES: readonly number[] = [50, 90, 99, 99.9];

function num(doc: Record<string, unknown>, key: string, stdout: string): number {
  const v = doc[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
    throw parseError('tcp-rr', stdout, `'${key}' is not a non-negative number`);
  return v;
}

function errorCounts(doc: Record<string, unknown>, stdout: string): Record<string, number> {
  const raw = doc.errorsByCode;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw parseError('tcp-rr', stdout, "'errorsByCode' is not an object");
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
    throw new CniBenchError(ErrorCodes.TOOL_FAILED, `tcp-rr: ${d.error}`, {
      details: { tool: 'tcp-rr', errorsByCode: d.errorsByCode },
    });
  }
  if (typeof d.connectPerTransaction !== 'boolean')
    throw parseError('tcp-rr', stdout, "'connectPerTransaction' is not a boolean");
  const connections = num(d, 'connections', stdout);
  const seconds = num(d, 'seconds', stdout);
  const transactions = num(d, 'transactions', stdout);
  const errors = num(d, 'errors', stdout);
  const byCode = errorCounts(d, stdout);
  const sum = Object.values(byCode).reduce((a, b) => a + b, 0);
  if (sum !== errors) throw parseError('tcp-rr', stdout, `errorsByCode sums to ${sum}, not errors ${errors}`);
  const h = histogramOf(d, stdout);
  if (h.total !== transactions)
    throw parseError('tcp-rr', stdout, `histogram holds ${h.total} values for ${transactions} transactions`);
  if (transactions === 0) {
    throw new CniBenchError(
      ErrorCodes.TOOL_FAILED,
      `tcp-rr: no transaction completed in ${seconds} s; errors: ${JSON.stringify(byCode)}`,
      {
        details: { tool: 'tcp-rr', errorsByCode: byCode },
      },
    );
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

const clientScript = builtinScript('tcp-rr');

export const tcpRr: ClientDriver = {
  tool: 'tcp-rr',
  // Exit 1 comes with a JSON {"error"} on stdout (never connected), which the parser reports.
  okExitCodes: [0, 1],
  buildClientArgs(spec: ClientSpec): string[] {
    const s: RrClientSpec = spec;
    return builtinClientArgs(clientScript, s, [
      '--connections',
      String(s.connections ?? 1),
      '--request-bytes',
      String(s.requestBytes ?? 1),
      '--response-bytes',
      String(s.responseBytes ?? 1),
      ...(s.connectPerTransaction ? ['--crr'] : []),
    ]);
  },
  parse(stdout: string): Measurement {
    return { kind: { $case: 'rr', value: parseTcpRrOutput(stdout) } };
  },
};
