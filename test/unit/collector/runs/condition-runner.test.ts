import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConditionRunner } from '../../../../collector/runs/condition-runner.js';
import type { RunPlan } from '../../../../collector/runs/plan.js';
import type { ConditionDriver, ConditionRequest } from '../../../../core/conditions.js';
import { createLogger } from '../../../../core/log.js';

const plan = {
  server: { info: { podIp: '198.18.16.10' } },
  client: { info: { podIp: '198.18.17.10' } },
  peer: { info: { podIp: '198.18.16.11' } },
} as unknown as RunPlan;

/** A driver that records calls (unit test of the runner's bookkeeping only; the lab tests use the real one). */
function recorder(failApply: boolean) {
  const calls: string[] = [];
  const driver: ConditionDriver = {
    description: 'recorder',
    apply: async (req: ConditionRequest, target) => {
      calls.push(`apply ${req.kind} ${target.serverPodIp} <- ${target.clientPodIps.join(',')}`);
      if (failApply) throw new Error('denied client still connects');
      return { how: 'ok', facts: {} };
    },
    revert: async (req: ConditionRequest) => {
      calls.push(`revert ${req.kind}`);
      return { how: 'gone', facts: {} };
    },
  };
  return { calls, driver };
}

const log = createLogger({ component: 'test' }, 'error');
const req: ConditionRequest = { kind: 'networkPolicy', policies: 1 };
const apply = { kind: 'condition', name: 'apply', action: 'apply', request: req, group: 'networkPolicy' } as const;
const measure = {
  kind: 'measure',
  name: 'm',
  measurement: {} as never,
  condition: { group: 'networkPolicy', label: 'networkPolicy x1', request: req },
} as const;

test('a failed apply refuses the measurements under it with the reason, and cleanup still reverts it', async () => {
  const { calls, driver } = recorder(true);
  const r = new ConditionRunner('run1', plan, driver, log);
  await assert.rejects(r.run(apply, new AbortController().signal), /still connects/);
  assert.throws(() => r.check(measure), /condition 'networkPolicy x1' not verified: denied client still connects/);
  await r.cleanup();
  assert.deepEqual(calls, ['apply networkPolicy 198.18.16.10 <- 198.18.17.10,198.18.16.11', 'revert networkPolicy']);
});

test('a reverted condition is not reverted again by cleanup; one left in place is', async () => {
  const { calls, driver } = recorder(false);
  const r = new ConditionRunner('run1', plan, driver, log);
  await r.run(apply, new AbortController().signal);
  r.check(measure);
  await r.run({ ...apply, action: 'revert' }, new AbortController().signal);
  await r.cleanup();
  assert.deepEqual(calls.slice(1), ['revert networkPolicy']);
  await r.run(apply, new AbortController().signal);
  await r.cleanup();
  assert.deepEqual(calls.slice(2), [
    'apply networkPolicy 198.18.16.10 <- 198.18.17.10,198.18.16.11',
    'revert networkPolicy',
  ]);
});

test('without a driver a condition fails naming the field', async () => {
  const r = new ConditionRunner('run1', plan, undefined, log);
  await assert.rejects(r.run(apply, new AbortController().signal), /conditions: this collector cannot/);
});
