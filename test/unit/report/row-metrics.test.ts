/**
 * Latency percentiles of a report row: merged from the rounds' histograms, and
 * never above the highest percentile a round's tool printed (netperf stops at
 * p99; a histogram rebuilt from its points only interpolates beyond that).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LatencyHistogram } from '../../../core/histogram.js';
import { Latency } from '../../../gen/cnibench/v1/agent.js';
import { latencyMetrics } from '../../../report/row-metrics.js';

const samples = Array.from({ length: 1000 }, (_, i) => 100 + i);
const round = (printed: number[]) => ({
  histogram: LatencyHistogram.fromSamples(samples).toProto(),
  latency: Latency.fromPartial({
    meanUs: 600,
    percentiles: printed.map((p) => ({ percentile: p, valueUs: 100 + p * 10 })),
  }),
});

test('a tool that printed up to p99 gets no p99.9; one that printed p99.9 (or only a histogram) does', () => {
  const names = (rounds: ReturnType<typeof round>[]) => latencyMetrics(rounds, 'us').map((m) => m.name);
  assert.deepEqual(names([round([50, 90, 99]), round([50, 90, 99])]), ['p50', 'p90', 'p99']);
  assert.deepEqual(names([round([50, 90, 99, 99.9]), round([50, 99.99])]), ['p50', 'p90', 'p99', 'p99.9']);
  assert.deepEqual(names([round([]), round([])]), ['p50', 'p90', 'p99', 'p99.9']);
  assert.deepEqual(
    names([round([50, 90, 99, 99.9]), round([50, 90, 99])]),
    ['p50', 'p90', 'p99'],
    'the weakest round decides',
  );
});

test('merged percentiles come from the merged histogram, not from averaging rounds', () => {
  const [p50] = latencyMetrics([round([]), round([])], 'us');
  assert.equal(p50?.source, 'merged-histogram');
  assert.ok(Math.abs((p50?.value ?? 0) - 600) < 10, `p50 ${p50?.value}`);
});
