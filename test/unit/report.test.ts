import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DataplaneSample } from '../../gen/cnibench/v1/agent.js';
import { dnatDelta } from '../../collector/report/report.js';

const s = (timeMs: number, sep: number, errors: string[] = []): DataplaneSample => ({
  runId: 'r',
  samplingJobId: 'j',
  timeMs,
  iptablesRules: 10,
  kubeServicesRules: 2,
  conntrackCount: 0,
  conntrackMax: 0,
  chains: [
    { chain: 'KUBE-SVC-AAAA', packets: 999, bytes: 0 },
    { chain: 'KUBE-SEP-BBBB', packets: sep, bytes: 0 },
    { chain: 'KUBE-SEP-CCCC', packets: 1, bytes: 0 },
  ],
  errors,
});

test('DNAT delta counts KUBE-SEP packets between the samples around the phase', () => {
  const samples = [s(1000, 5), s(2000, 7), s(3000, 50), s(4000, 80), s(5000, 90)];
  assert.equal(dnatDelta(samples, 2500, 3500), 80 - 7);
});

test('no sample after the phase, or failed reads, give null rather than zero', () => {
  assert.equal(dnatDelta([s(1000, 5)], 1500, 2500), null);
  assert.equal(dnatDelta([s(1000, 5), s(3000, 9, ['iptables: E_TOOL_MISSING'])], 1500, 2500), null);
});
