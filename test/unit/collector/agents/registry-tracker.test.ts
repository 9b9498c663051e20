import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentRegistry, SEQ_WINDOW } from '../../../../collector/agents/registry.js';
import { CollectorMetrics } from '../../../../collector/metrics.js';
import { JobTracker } from '../../../../collector/runs/job-tracker.js';
import { Store } from '../../../../collector/store/store.js';
import { WriteQueue } from '../../../../collector/store/write-queue.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { JobState, type RegisterRequest } from '../../../../gen/cnibench/v1/agent.js';

const req = (node: string, instanceId: string): RegisterRequest => ({
  nodeName: node,
  podName: node,
  podIp: '198.18.16.10',
  hostIp: '',
  kernel: '6.1',
  agentVersion: '0',
  instanceId,
  tools: [],
  dataplane: undefined,
  labels: {},
  agentName: '',
  cpus: 2,
  monitor: undefined,
  nodeFacts: undefined,
});

test('sequence numbers are deduplicated per agent instance and reset for a new instance', () => {
  const reg = new AgentRegistry(new CollectorMetrics(false), 1000);
  reg.register(req('a', 'i1'), true);
  assert.equal(reg.accept('a', 1), 'new');
  assert.equal(reg.accept('a', 2), 'new');
  assert.equal(reg.accept('a', 2), 'duplicate', 'a resent message is a duplicate');
  assert.equal(reg.accept('a', 5), 'new', 'a gap (overflow on the agent) is accepted');
  assert.equal(reg.accept('a', 5 + SEQ_WINDOW + 1), 'out-of-window', 'a jump beyond the window is refused');
  assert.equal(reg.lastSeq('a'), 5, 'and does not move the position');
  assert.equal(reg.accept('a', 6), 'new', 'so the next genuine message is still stored');
  reg.register(req('a', 'i1'), true);
  assert.equal(reg.lastSeq('a'), 6, 'a reconnect of the same instance keeps its position');
  reg.register(req('a', 'i2'), true);
  assert.equal(reg.lastSeq('a'), 0, 'a restarted agent numbers from 1 again');
});

test('silent agents are declared lost once, and their waiting jobs fail with E_AGENT_LOST', async () => {
  const metrics = new CollectorMetrics(false);
  const reg = new AgentRegistry(metrics, 1000);
  const store = new Store(':memory:');
  const tracker = new JobTracker(new WriteQueue(store));
  reg.on('lost', (id) => tracker.agentLost(id));
  const t0 = Date.now();
  reg.register(req('a', 'i1'), true, t0);
  reg.attach('a', () => undefined);
  tracker.expect({ jobId: 'j1', runId: 'r', agentId: 'a', phaseIndex: 0, warmup: false });
  const waiting = tracker.waitForResult('j1', 60_000);
  assert.deepEqual(reg.sweep(t0 + 500), []);
  assert.deepEqual(reg.sweep(Date.now() + 1500), ['a']);
  assert.deepEqual(reg.sweep(Date.now() + 3000), [], 'declared lost only once');
  await assert.rejects(waiting, (err) => isCniBenchError(err, 'E_AGENT_LOST'));
  assert.equal(reg.available().length, 0);
  assert.match(
    await metrics.registry.getSingleMetricAsString('cni_bench_agents_lost_total'),
    /cni_bench_agents_lost_total 1/,
  );
  store.close();
});

test('a failed job rejects its waiter with the agent-reported code', async () => {
  const store = new Store(':memory:');
  const tracker = new JobTracker(new WriteQueue(store));
  tracker.expect({ jobId: 'j', runId: 'r', agentId: 'a', phaseIndex: 0, warmup: false });
  const ready = tracker.waitForState('j', JobState.JOB_STATE_READY, 5000);
  tracker.onMessage('a', {
    seq: 1,
    body: {
      $case: 'jobEvent',
      value: {
        jobId: 'j',
        runId: 'r',
        state: JobState.JOB_STATE_FAILED,
        message: "tool 'iperf3' is not installed",
        errorCode: 'E_TOOL_MISSING',
        timeMs: 1,
      },
    },
  });
  await assert.rejects(
    ready,
    (err) => isCniBenchError(err, 'E_TOOL_MISSING') && /agent a: tool 'iperf3'/.test(err.message),
  );
  store.close();
});

test('without identities a live agent cannot be displaced, an agent id stays with its node, and lost agents expire', () => {
  const reg = new AgentRegistry(new CollectorMetrics(false), 1000, 3, 5000);
  const t0 = Date.now();
  reg.register(req('a', 'i1'), false, t0);
  reg.attach('a', () => undefined);
  assert.throws(
    () => reg.register(req('a', 'evil'), false, t0 + 10),
    (e) => isCniBenchError(e, 'E_CONFLICT') && /node_name: /.test(e.message),
  );
  assert.doesNotThrow(() => reg.register(req('a', 'i2'), true, t0 + 10), 'the node\u2019s own identity may restart it');
  assert.throws(
    () => reg.register({ ...req('b', 'x'), agentName: 'a' }, true, t0),
    (e) => isCniBenchError(e, 'E_FORBIDDEN') && /agent_name: /.test(e.message),
  );
  reg.register(req('b', 'x'), false, t0);
  reg.register(req('c', 'x'), false, t0);
  assert.throws(
    () => reg.register(req('d', 'x'), false, t0),
    (e) => isCniBenchError(e, 'E_CONFLICT'),
    'bounded',
  );
  reg.sweep(t0 + 2000);
  assert.equal(reg.list().length, 3, 'lost, not yet forgotten');
  reg.sweep(t0 + 8000);
  assert.equal(reg.list().length, 0, 'forgotten after expireAfterMs');
  assert.doesNotThrow(() => reg.register(req('d', 'x'), false, t0 + 8000));
});

test('results and samples are kept only from the agent that owns the job, for its run', async () => {
  const store = new Store(':memory:');
  const tracker = new JobTracker(new WriteQueue(store));
  store.insertRun({
    id: 'r',
    state: 'running',
    reason: '',
    createdMs: 1,
    startedMs: 1,
    endedMs: 0,
    scenario: {},
    cluster: {},
  });
  tracker.expect({ jobId: 'r-j1', runId: 'r', agentId: 'a', phaseIndex: 0, warmup: false });
  const result = (jobId: string, runId: string) => ({
    seq: 1,
    body: {
      $case: 'result' as const,
      value: {
        jobId,
        runId,
        tool: 'iperf3',
        toolVersion: '',
        rawOutput: '',
        startedMs: 0,
        endedMs: 0,
        round: 0,
      } as any,
    },
  });
  const sample = (runId: string) => ({
    seq: 1,
    body: { $case: 'sample' as const, value: { runId, samplingJobId: '', timeMs: 1, chains: [], errors: [] } as any },
  });
  assert.equal(tracker.onMessage('b', result('r-j1', 'r')), undefined, 'another agent\u2019s job');
  assert.equal(tracker.onMessage('a', result('r-j1', 'other')), undefined, 'the right job under another run id');
  assert.equal(tracker.onMessage('a', result('r-j9', 'r')), undefined, 'a job never sent');
  assert.equal(tracker.onMessage('b', sample('r')), undefined, 'an agent not in the run');
  assert.equal(tracker.onMessage('a', sample('gone')), undefined, 'a run not live');
  assert.equal(store.results('r').length + store.samples('r').length, 0);
  const kept = tracker.onMessage('a', result('r-j1', 'r'));
  assert.ok(kept instanceof Promise);
  assert.equal(tracker.onMessage('a', result('r-j1', 'r')), undefined, 'one result per job, even while queued');
  const keptSample = tracker.onMessage('a', sample('r'));
  assert.ok(keptSample instanceof Promise);
  await Promise.all([kept, keptSample]);
  tracker.forget('r-j1');
  assert.equal(tracker.onMessage('a', sample('r')), undefined, 'after the run\u2019s cleanup');
  assert.equal(store.results('r').length, 1);
  assert.equal(store.samples('r').length, 1);
  store.close();
});

test('after the collector stood still its agents get a fresh timeout; one really gone is lost a timeout later', () => {
  const reg = new AgentRegistry(new CollectorMetrics(false), 1000);
  const t0 = Date.now();
  reg.register(req('a', 'i1'), true, t0);
  reg.attach('a', () => undefined);
  reg.collectorStalled(t0 + 30_000);
  assert.deepEqual(reg.sweep(t0 + 30_100), [], 'not lost for the collector\u2019s own silence');
  assert.deepEqual(reg.sweep(t0 + 31_500), ['a']);
});

test('acknowledged is what committed: a failed transaction rolls the accepted position back, another instance is untouched', () => {
  const reg = new AgentRegistry(new CollectorMetrics(false), 1000);
  reg.register(req('a', 'i1'), true);
  assert.equal(reg.accept('a', 1), 'new');
  assert.equal(reg.accept('a', 2), 'new');
  assert.equal(reg.committed('a', 'i1', 1), 1);
  reg.rollback('a', 'i1');
  assert.equal(reg.accept('a', 2), 'new', 'the resend of what did not commit is stored, not taken for a duplicate');
  assert.equal(reg.committed('a', 'other', 2), 0, 'an old instance\u2019s commit does not move this one');
  assert.equal(reg.ackedSeq('a'), 1);
  assert.equal(reg.register(req('a', 'i1'), true).ackedSeq, 1, 'a reconnect resumes after what committed');
});
