/**
 * wrk: HTTP load at maximum rate over a fixed number of connections, keep-alive
 * or one connection per request (`Connection: close`, the study's "short
 * connection" mode). wrk has no machine-readable output, so its summary text is
 * parsed strictly: a missing summary is an error, never zero requests.
 */

import { fileURLToPath } from 'node:url';
import { CniBenchError, ErrorCodes, parseError } from '../../core/errors.js';
import { LatencyHistogram } from '../../core/histogram.js';
import type { Histogram, HttpLoadResult, Measurement } from '../../gen/cnibench/v1/agent.js';
import type { ClientDriver, ClientSpec } from './driver.js';
import { wholeSeconds } from './iperf3.js';

/** The Lua script that prints wrk's latency distribution (assets/ sits beside dist/ and the sources alike). */
export const WRK_PERCENTILES_SCRIPT = fileURLToPath(new URL('../../../assets/wrk/percentiles.lua', import.meta.url));

const UNIT_US: Record<string, number> = { us: 1, ms: 1e3, s: 1e6, m: 60e6, h: 3600e6 };

/** "1.52ms" -> 1520 (microseconds). */
export function durationToUs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m|h)$/.exec(text.trim());
  const unit = m?.[2];
  if (!m || !unit) throw new Error(`not a wrk duration: '${text}'`);
  return Number(m[1]) * (UNIT_US[unit] ?? NaN);
}

/**
 * Rebuilds a histogram from the percentile block the Lua script prints, with
 * LatencyHistogram.fromRankedPoints: wrk's percentile(p) is the sample of rank
 * round(p/100 * count + 0.5) (wrk's stats.c), min and max those of ranks 1 and
 * count. Counts, min, max and the points are exact; the shape inside each
 * 0.1% (0.001% above p99.9) slice is not. Undefined without a block.
 */
export function parseWrkLatencyBlock(stdout: string): Histogram | undefined {
  const begin = stdout.indexOf('cni-bench-wrk-latency-begin');
  if (begin < 0) return undefined;
  const end = stdout.indexOf('cni-bench-wrk-latency-end', begin);
  if (end < 0) throw parseError('wrk', stdout.slice(begin), 'latency block without its end marker (truncated)');
  const block = stdout.slice(begin, end);
  const count = /^count (\d+)$/m.exec(block);
  const min = /^min (\d+)$/m.exec(block);
  const max = /^max (\d+)$/m.exec(block);
  if (!count || !min || !max) throw parseError('wrk', block, 'latency block without count, min and max');
  const total = Number(count[1]);
  const printed = [...block.matchAll(/^p ([\d.]+) (\d+)$/gm)].map((m) => ({ p: Number(m[1]), us: Number(m[2]) }));
  if (printed.length < 10) throw parseError('wrk', block, `latency block has ${printed.length} percentile points`);
  if (total === 0) return new LatencyHistogram().toProto();
  const points = [
    { rank: 1, us: Number(min[1]) },
    ...printed.map((x) => ({ rank: Math.min(total, Math.max(1, Math.round((x.p / 100) * total + 0.5))), us: x.us })),
    { rank: total, us: Number(max[1]) },
  ];
  return LatencyHistogram.fromRankedPoints(points, (reason) => parseError('wrk', block, reason)).toProto();
}

export function parseWrkOutput(stdout: string): HttpLoadResult {
  const summary = /^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h),/m.exec(stdout);
  if (!summary) {
    const failed = /^unable to connect to .*$/m.exec(stdout);
    if (failed) throw new CniBenchError(ErrorCodes.TOOL_FAILED, `wrk: ${failed[0]}`, { details: { tool: 'wrk' } });
    throw parseError('wrk', stdout, "no 'N requests in T' summary line");
  }
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(stdout);
  const conns = /(\d+) threads and (\d+) connections/.exec(stdout);
  const lat = /^\s*Latency\s+([\d.]+\w+)\s+([\d.]+\w+)\s+([\d.]+\w+)/m.exec(stdout);
  if (!rps || !conns) throw parseError('wrk', stdout, "missing 'Requests/sec' or 'threads and connections'");
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(stdout);
  const histogram = parseWrkLatencyBlock(stdout);
  try {
    const percentiles = [...stdout.matchAll(/^\s+(50|75|90|99(?:\.\d+)?)%\s+([\d.]+\w+)\s*$/gm)].map((m) => ({
      percentile: Number(m[1]),
      valueUs: durationToUs(m[2] ?? ''),
    }));
    return {
      connections: Number(conns[2]),
      keepalive: false,
      seconds: durationToUs(`${summary[2]}${summary[3]}`) / 1e6,
      requests: Number(summary[1]),
      requestsPerSecond: Number(rps[1]),
      non2xx: non2xx ? Number(non2xx[1]) : 0,
      socketErrors: socket
        ? { connect: Number(socket[1]), read: Number(socket[2]), write: Number(socket[3]), timeout: Number(socket[4]) }
        : { connect: 0, read: 0, write: 0, timeout: 0 },
      latency: lat
        ? {
            meanUs: durationToUs(lat[1] ?? ''),
            stdevUs: durationToUs(lat[2] ?? ''),
            maxUs: durationToUs(lat[3] ?? ''),
            percentiles,
          }
        : { meanUs: 0, stdevUs: 0, maxUs: 0, percentiles },
      histogram,
      targetQps: 0,
      // wrk (unlike wrk2) times each request from when it was sent: closed loop at maximum rate.
      latencyFromIntendedStart: false,
      sendLagMeanUs: 0,
    };
  } catch (err) {
    throw parseError('wrk', stdout, (err as Error).message);
  }
}

export const wrk: ClientDriver = {
  tool: 'wrk',
  buildClientArgs(spec: ClientSpec): string[] {
    const connections = spec.connections ?? 64;
    const threads = Math.min(spec.threads ?? 2, connections);
    const path = spec.path?.startsWith('/') ? spec.path : `/${spec.path ?? ''}`;
    return [
      '-t',
      String(threads),
      '-c',
      String(connections),
      '-d',
      `${wholeSeconds(spec.durationSeconds)}s`,
      '--latency',
      '--timeout',
      '5s',
      '-s',
      WRK_PERCENTILES_SCRIPT,
      ...(spec.keepalive === false ? ['-H', 'Connection: close'] : []),
      `http://${spec.targetHost}:${spec.targetPort}${path}`,
    ];
  },
  cpuThreads(spec: ClientSpec): number {
    return Math.min(spec.threads ?? 2, spec.connections ?? 64);
  },
  parse(stdout: string, spec: ClientSpec): Measurement {
    const result = parseWrkOutput(stdout);
    result.keepalive = spec.keepalive ?? true;
    return { kind: { $case: 'http', value: result } };
  },
};
