import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DataplaneSample } from '../../../gen/cnibench/v1/agent.js';
import { dnatDelta } from '../../../report/report.js';

const s = (timeMs: number, sep: number, errors: string[] = []): DataplaneSample =>
  DataplaneSample.fromPartial({
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

test('DNAT delta counts KUBE-SEP packets between the two boundary samples', () => {
  assert.equal(dnatDelta(s(2000, 7), s(4000, 80)), 80 - 7);
});

test('a missing boundary sample or a failed iptables read gives null rather than zero', () => {
  assert.equal(dnatDelta(s(1000, 5), undefined), null);
  assert.equal(dnatDelta(undefined, s(1000, 5)), null);
  assert.equal(dnatDelta(s(1000, 5), s(3000, 9, ['iptables: E_TOOL_MISSING'])), null);
});
