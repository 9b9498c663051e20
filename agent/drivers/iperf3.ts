/**
 * iperf3: TCP throughput with `-J` (machine-readable JSON). The receiver's sum
 * is the number that counts (what arrived); sender rate and retransmits are
 * kept beside it. iperf3 reports its own failures inside the JSON (`error`),
 * which become E_TOOL_FAILED with iperf3's words.
 */
import { CniBenchError, ErrorCodes, parseError } from '../../core/errors.js';
import { parseToolJson } from '../../core/tool-json.js';
import type { Measurement, ThroughputResult } from '../../gen/cnibench/v1/agent.js';
import type { ClientDriver, ClientSpec, ServerDriver, ServerSpec } from './driver.js';

/** iperf3 -t takes whole seconds. */
export function wholeSeconds(seconds: number): number {
  return Math.max(1, Math.ceil(seconds));
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** The parts of iperf3's `-J` document read here; every leaf is checked before use. */
interface Iperf3Sum {
  bits_per_second?: unknown;
  seconds?: unknown;
  bytes?: unknown;
  retransmits?: unknown;
  jitter_ms?: unknown;
  lost_packets?: unknown;
  packets?: unknown;
}
interface Iperf3Doc {
  error?: unknown;
  start?: { test_start?: { num_streams?: unknown; protocol?: unknown; target_bitrate?: unknown } };
  end?: { sum_received?: Iperf3Sum; sum_sent?: Iperf3Sum; sum?: Iperf3Sum };
}

export function parseIperf3Json(stdout: string): ThroughputResult {
  const doc = parseToolJson('iperf3', stdout) as Iperf3Doc | null;
  if (typeof doc?.error === 'string') {
    throw new CniBenchError(ErrorCodes.TOOL_FAILED, `iperf3: ${doc.error}`, { details: { tool: 'iperf3' } });
  }
  const received = doc?.end?.sum_received;
  const sent = doc?.end?.sum_sent;
  const bps = num(received?.bits_per_second);
  const seconds = num(received?.seconds);
  const bytes = num(received?.bytes);
  const streams = num(doc?.start?.test_start?.num_streams);
  if (bps === undefined || seconds === undefined || bytes === undefined || streams === undefined) {
    throw parseError('iperf3', stdout, 'missing end.sum_received or start.test_start.num_streams');
  }
  const protocol = String(doc?.start?.test_start?.protocol ?? 'TCP').toLowerCase();
  // UDP: loss and jitter are measured by the receiver and reported in end.sum.
  const udp = protocol === 'udp' ? doc?.end?.sum : undefined;
  if (
    udp &&
    (num(udp.jitter_ms) === undefined || num(udp.lost_packets) === undefined || num(udp.packets) === undefined)
  ) {
    throw parseError('iperf3', stdout, 'UDP result without end.sum jitter_ms, lost_packets and packets');
  }
  return {
    protocol,
    streams,
    seconds,
    bytes,
    bitsPerSecond: bps,
    senderBitsPerSecond: num(sent?.bits_per_second) ?? 0,
    retransmits: num(sent?.retransmits) ?? 0,
    jitterMs: udp ? (udp.jitter_ms as number) : 0,
    lostPackets: udp ? (udp.lost_packets as number) : 0,
    packets: udp ? (udp.packets as number) : 0,
    // iperf3 -b is per stream.
    targetBitsPerSecond: (num(doc?.start?.test_start?.target_bitrate) ?? 0) * streams,
  };
}

export const iperf3: ClientDriver & ServerDriver = {
  tool: 'iperf3',
  // With -J, iperf3 exits 1 and explains in the JSON's "error"; the parser turns that into a coded error.
  okExitCodes: [0, 1],
  buildClientArgs(spec: ClientSpec): string[] {
    return [
      '-c',
      spec.targetHost,
      '-p',
      String(spec.targetPort),
      '-t',
      String(wholeSeconds(spec.durationSeconds)),
      '-P',
      String(spec.streams ?? 1),
      ...(spec.protocol === 'udp'
        ? ['-u', '-b', String(Math.max(1, Math.round((spec.targetBitsPerSecond || 1e6) / (spec.streams ?? 1))))]
        : []),
      '-J',
      '--connect-timeout',
      '3000',
    ];
  },
  buildServerArgs(spec: ServerSpec): string[] {
    return ['-s', '-p', String(spec.port)];
  },
  parse(stdout: string): Measurement {
    return { kind: { $case: 'throughput', value: parseIperf3Json(stdout) } };
  },
};
