/**
 * Driver of the built-in open-loop probe stream, agent/builtins/probe-stream.ts
 * (against agent/builtins/tcp-echo.ts): a disruption phase's client. It sends
 * on a fixed schedule whatever answers, so its numbers show what the dataplane
 * did to traffic during an event, not how fast it can go; its latency includes
 * Node's event loop on both ends.
 */
import type { Measurement } from '../../gen/cnibench/v1/agent.js';
import { parseTimeline, timelineToProto } from '../../report/disruption.js';
import { builtinClientArgs, builtinScript } from './builtin-args.js';
import type { ClientDriver, ClientSpec } from './driver.js';

const script = builtinScript('probe-stream');

export const probeStream: ClientDriver = {
  tool: 'probe-stream',
  buildClientArgs(s: ClientSpec): string[] {
    return builtinClientArgs(script, s, [
      '--rate',
      String(s.rate || 100),
      '--kept',
      String(s.keptConnections || 4),
      '--timeout-ms',
      String(s.timeoutMs || 1000),
      '--bin-ms',
      String(s.binMs || 100),
      ...(s.streamStartAtMs ? ['--start-at-ms', String(s.streamStartAtMs)] : []),
    ]);
  },
  /** E_PARSE naming probe-stream for output that is not its one JSON line (report/disruption.ts parseTimeline). */
  parse(stdout: string): Measurement {
    return { kind: { $case: 'disruption', value: timelineToProto(parseTimeline(stdout)) } };
  },
};
