import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentRegistry } from '../../collector/agents/registry.js';
import { CollectorMetrics } from '../../collector/metrics.js';
import { JobTracker } from '../../collector/runs/job-tracker.js';
import { Store } from '../../collector/store/store.js';
import { isCniBenchError } from '../../core/errors.js';
import { JobState, type RegisterRequest } from '../../gen/cnibench/v1/agent.js';

const req = (node: string, instanceId: string): RegisterRequest => ({
  nodeName: node, podName: node, podIp: '198.18.16.10', hostIp: '', kernel: '6.1', agentVersion: '0', instanceId, tools: [], dataplane: undefined, labels: {}, agentName: '', cpus: 2, monitor: undefined,
});

test('sequence numbers are deduplicated per agent instance and reset for a new instance', () => {
  const reg = new AgentRegistry(new CollectorMetrics(false), 1000);
  reg.register(req('a', 'i1'));
  assert.ok(reg.accept('a', 1));
  assert.ok(reg.accept('a', 2));
  assert.ok(!reg.accept('a', 2), 'a resent message is a duplicate');
  assert.ok(reg.accept('a', 5), 'a gap (overflow on the agent) is accepted');
  reg.register(req('a', 'i1'));
  assert.equal(reg.lastSeq('a'), 5, 'a reconnect of the same instance keeps its position');
  reg.register(req('a', 'i2'));
  assert.equal(reg.lastSeq('a'), 0, 'a restarted agent numbers from 1 again');
});

test('silent agents are declared lost once, and their waiting jobs fail with E_AGENT_LOST', async () => {
  const metrics = new CollectorMetrics(false);
  const reg = new AgentRegistry(metrics, 1000);
  const store = new Store(':memory:');
  const tracker = new JobTracker(store);
  reg.on('lost', (id) => tracker.agentLost(id));
  const t0 = Date.now();
  reg.register(req('a', 'i1'), t0);
  reg.attach('a', () => undefined);
  tracker.expect({ jobId: 'j1', runId: 'r', agentId: 'a', phaseIndex: 0, warmup: false });
  const waiting = tracker.waitForResult('j1', 60_000);
  assert.deepEqual(reg.sweep(t0 + 500), []);
  assert.deepEqual(reg.sweep(Date.now() + 1500), ['a']);
  assert.deepEqual(reg.sweep(Date.now() + 3000), [], 'declared lost only once');
  await assert.rejects(waiting, (err) => isCniBenchError(err, 'E_AGENT_LOST'));
  assert.equal(reg.available().length, 0);
  assert.match(await metrics.registry.getSingleMetricAsString('cni_bench_agents_lost_total'), /cni_bench_agents_lost_total 1/);
  store.close();
});

test('a failed job rejects its waiter with the agent-reported code', async () => {
  const store = new Store(':memory:');
  const tracker = new JobTracker(store);
  tracker.expect({ jobId: 'j', runId: 'r', agentId: 'a', phaseIndex: 0, warmup: false });
  const ready = tracker.waitForState('j', JobState.JOB_STATE_READY, 5000);
  tracker.onMessage('a', { seq: 1, body: { $case: 'jobEvent', value: { jobId: 'j', runId: 'r', state: JobState.JOB_STATE_FAILED, message: "tool 'iperf3' is not installed", errorCode: 'E_TOOL_MISSING', timeMs: 1 } } });
  await assert.rejects(ready, (err) => isCniBenchError(err, 'E_TOOL_MISSING') && /agent a: tool 'iperf3'/.test(err.message));
  store.close();
});
