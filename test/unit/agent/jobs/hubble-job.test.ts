import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JobRunner } from '../../../../agent/jobs/job-runner.js';
import type { Outbox } from '../../../../agent/outbox.js';
import type { DataplaneSampler } from '../../../../agent/samplers/dataplane-sampler.js';
import { createLogger } from '../../../../core/log.js';
import { type AgentMessage, JobState } from '../../../../gen/cnibench/v1/agent.js';

test('a Hubble query is answered with a sample carrying only the reading; a node without a cilium-agent says why', async () => {
  const pushed: NonNullable<AgentMessage['body']>[] = [];
  const outbox = { push: (b: NonNullable<AgentMessage['body']>) => pushed.push(b) } as unknown as Outbox;
  const sampler = {
    ciliumAgent: async (notes: string[]) => {
      notes.push('cilium-agent (pid 7) API not read: connect ENOENT');
      return undefined;
    },
  } as unknown as DataplaneSampler;
  const runner = new JobRunner({
    outbox,
    log: createLogger({ component: 'test' }, 'error'),
    toolVersion: () => undefined,
    sampler,
    hostNetns: '',
    cpus: 1,
    nodeName: 'node-a',
  });
  runner.handle({
    jobId: 'r1-j1',
    runId: 'r1',
    kind: { $case: 'sampleOnce', value: { serversOnly: false, hubble: { flowsTo: '10.0.0.1', flows: 10 } } },
  });
  for (
    let i = 0;
    i < 100 && !pushed.some((b) => b.$case === 'jobEvent' && b.value.state === JobState.JOB_STATE_SUCCEEDED);
    i++
  )
    await new Promise((r) => setTimeout(r, 20));
  const sample = pushed.find((b) => b.$case === 'sample');
  assert.ok(sample?.$case === 'sample');
  assert.equal(sample.value.samplingJobId, 'r1-j1');
  assert.deepEqual(sample.value.hubble?.errors, [
    'no cilium-agent API on this node: cilium-agent (pid 7) API not read: connect ENOENT',
  ]);
  assert.equal(sample.value.hubble?.nodeName, 'node-a');
  assert.equal(sample.value.hubble?.state, '');
  assert.equal(sample.value.iptablesRules, 0);
  assert.deepEqual(sample.value.notes, ['hubble reading only']);
});
