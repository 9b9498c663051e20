/**
 * Programming latency of a sweep step from the rounds of sync samples, as pure
 * logic: an upper bound (the round that saw every node caught up had arrived)
 * with the resolution the polling gives, and the sweep tables carrying it side
 * by side per dataplane.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { programmingLatency } from '../../../../collector/runs/sync.js';
import { compareSweeps, type SweepStep, type SweepTable } from '../../../../report/sweep.js';
import { latencyText, renderLatencyComparison } from '../../../../report/sweep-latency.js';

test('latency runs from the first write to the arrival of the first round that saw every node caught up', () => {
  const polls = [
    { sentMs: 1500, receivedMs: 1700, ok: false },
    { sentMs: 1900, receivedMs: 2150, ok: false },
    { sentMs: 2350, receivedMs: 2600, ok: true },
  ];
  // The previous round was asked for at 2350 - 450 = 1900: the nodes caught up after that, by 2600.
  assert.deepEqual(programmingLatency(1000, 1400, polls), { latencyMs: 1600, resolutionMs: 700 });
});

test('when the first round already sees the step, the resolution reaches back to the last write', () => {
  assert.deepEqual(programmingLatency(1000, 1400, [{ sentMs: 1410, receivedMs: 1480, ok: true }]), {
    latencyMs: 480,
    resolutionMs: 80,
  });
  assert.throws(() => programmingLatency(0, 1, [{ sentMs: 2, receivedMs: 3, ok: false }]), /no poll/);
});

const step = (services: number, latency: number | null): SweepStep => ({
  services,
  programmingMs: 1,
  syncMs: 1,
  pollMs: 1,
  programmingLatencyMs: latency,
  latencyResolutionMs: latency === null ? null : 250,
  pollPauseMs: 200,
  kubeServicesRules: null,
  nftServiceIps: null,
  ciliumFrontends: null,
  status: 'succeeded',
});
const sweep = (latencies: (number | null)[]): SweepTable => ({
  steps: latencies.map((l, i) => step(i * 1000, l)),
  series: [],
});

test('the comparison puts every dataplane programming latency side by side and states the polling resolution', () => {
  const c = compareSweeps([
    { label: 'iptables (legacy)', sweep: sweep([120, 1800]) },
    { label: 'cilium', sweep: sweep([300, null]) },
  ]);
  assert.deepEqual(c.latency[0]?.latencyMs, [120, 1800]);
  assert.deepEqual(c.latency[1]?.latencyMs, [300, null]);
  const text = renderLatencyComparison(c).join('\n');
  assert.match(text, /\| 1,000 \| 1\.8 s \(−0\.3\) \| — \|/);
  assert.match(text, /polled every 200 ms/);
  assert.equal(latencyText(null, null), '—');
  assert.deepEqual(renderLatencyComparison(compareSweeps([{ label: 'old', sweep: sweep([null]) }])), []);
});
