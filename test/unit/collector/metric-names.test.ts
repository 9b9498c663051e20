/**
 * Prometheus naming of the collector's metrics (issue 17 item 7): the dropped
 * count is a counter ending in _total that keeps rising across an agent's
 * restart, the standard process_* and nodejs_* names are unprefixed, and no
 * precomputed quantile gauge is exported (percentiles come from histograms).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CollectorMetrics } from '../../../collector/metrics.js';

test('cni_bench_agent_outbox_dropped_total counts increases of what an agent reports, restarts included', async () => {
  const m = new CollectorMetrics(false);
  m.agentOutboxDropped('a', 5);
  m.agentOutboxDropped('a', 7);
  m.agentOutboxDropped('a', 7);
  m.agentOutboxDropped('a', 2); // restarted: counts from zero again
  const text = await m.registry.metrics();
  assert.match(text, /^# TYPE cni_bench_agent_outbox_dropped_total counter$/m);
  assert.match(text, /^cni_bench_agent_outbox_dropped_total\{agent="a"\} 9$/m);
  m.agentForgotten('a');
  assert.doesNotMatch(await m.registry.metrics(), /agent="a"/);
});

test('standard process_* names, and no quantile gauges', async () => {
  const text = await new CollectorMetrics().registry.metrics();
  for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds'])
    assert.match(text, new RegExp(`^${name} `, 'm'), name);
  assert.doesNotMatch(text, /cni_bench_collector_process_|_p50_|_p99_|quantile=/);
});
