/** core/policy-apply.ts: the fillers in parallel, the allow policy alone and last, a cancel between creates, and the timing split. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isCniBenchError } from '../../../core/errors.js';
import { applyPolicies, createAllowLast, enforcedEvidence } from '../../../core/policy-apply.js';
import type { PolicyState } from '../../../core/policy-verify.js';
import { sleep } from '../../../core/sleep.js';

test('the allow policy (the last) is created alone, after every filler is in; at most 8 fillers at a time', async () => {
  const policies = Array.from({ length: 30 }, (_, i) => `p${i}`);
  const done: string[] = [];
  let inFlight = 0;
  let most = 0;
  let inFlightAtLast = -1;
  await createAllowLast(
    policies,
    async (p) => {
      if (p === 'p29') inFlightAtLast = inFlight;
      inFlight++;
      most = Math.max(most, inFlight);
      await sleep(2);
      inFlight--;
      done.push(p);
    },
    new AbortController().signal,
  );
  assert.equal(done.length, 30);
  assert.equal(done.at(-1), 'p29');
  assert.equal(inFlightAtLast, 0, 'nothing else in flight when the allow policy goes');
  assert.equal(most, 8);
  // One policy: it is the allow policy, created once.
  const one: string[] = [];
  await createAllowLast(['only'], async (p) => one.push(p), new AbortController().signal);
  assert.deepEqual(one, ['only']);
});

test('an abort stops the fillers with E_CANCELLED and the allow policy is never created', async () => {
  const ac = new AbortController();
  const created: string[] = [];
  await assert.rejects(
    createAllowLast(
      Array.from({ length: 40 }, (_, i) => `p${i}`),
      async (p) => {
        created.push(p);
        if (created.length === 10) ac.abort();
        await sleep(1);
      },
      ac.signal,
    ),
    (err) => isCniBenchError(err, 'E_CANCELLED'),
  );
  assert.ok(!created.includes('p39'), 'no allow policy');
  assert.ok(created.length < 40);
});

test('enforcement is waited for from the first create; the time after the last create is never negative', async () => {
  let since = 0;
  let firstCreate = 0;
  const before = Date.now();
  const r = await applyPolicies(
    ['a', 'b'],
    () => {
      firstCreate ||= Date.now();
      return sleep(20);
    },
    async (s): Promise<PolicyState> => {
      since = s;
      return { ms: 5, denied: 'timeout', allowed: 'connected', polls: 1 };
    },
    new AbortController().signal,
  );
  assert.ok(
    since >= before && since <= firstCreate,
    `since ${since - before} ms, first create ${firstCreate - before} ms`,
  );
  assert.ok(r.apiMs >= 35, `api ${r.apiMs} ms for two creates of 20 ms in turn`);
  assert.equal(r.afterLastCreateMs, 0, 'observed (5 ms) before the API finished: clamped to 0');
  const later = await applyPolicies(
    ['a'],
    async () => undefined,
    async () => ({ ms: 500, denied: 'timeout', allowed: 'connected', polls: 3 }),
    new AbortController().signal,
  );
  assert.equal(later.afterLastCreateMs, 500 - later.apiMs);
  assert.equal(later.on.polls, 3);
});

test("a step's evidence: enforcement time, the API's share and the probes' facts, in that order", () => {
  const e = enforcedEvidence(
    3,
    { on: { ms: 900, denied: 'timeout', allowed: 'connected', polls: 7 }, apiMs: 200, afterLastCreateMs: 700 },
    'lab-n2-p0',
    'lab-n1-p0,lab-n0-p1',
  );
  assert.equal(
    JSON.stringify(e),
    '{"enforcementMs":900,"apiMs":200,"facts":{"policies":3,"afterLastCreateMs":700,"denied":"lab-n2-p0","allowed":"lab-n1-p0,lab-n0-p1","polls":7}}',
  );
});
