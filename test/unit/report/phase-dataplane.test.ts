import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SampleRecord } from '../../../collector/store/store.js';
import { DataplaneSample } from '../../../gen/cnibench/v1/agent.js';
import { summarisePhase } from '../../../report/phase-dataplane.js';

const rec = (timeMs: number, s: Partial<DataplaneSample>): SampleRecord => ({
  runId: 'r',
  agentId: 'n0',
  sample: DataplaneSample.fromPartial({ timeMs, ...s }),
});

test('servers-only samples (round brackets) never count as dataplane readings of the phase', () => {
  const samples = [
    rec(10, { conntrackCount: 50, conntrackMax: 1000, iptablesRules: 8 }),
    rec(20, { serversOnly: true, servers: [{ tool: 'iperf3', jobId: 'j', pid: 1, cpuSeconds: 1, rssBytes: 1 }] }),
    rec(30, { conntrackCount: 70, conntrackMax: 1000, iptablesRules: 8 }),
    rec(40, { serversOnly: true }),
  ];
  const [n] = summarisePhase(samples, 0, 100);
  assert.equal(n?.samples, 2);
  assert.equal(n?.conntrackMax, 1000);
  assert.equal(n?.iptablesRules, 8);
});
