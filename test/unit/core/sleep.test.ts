/** core/sleep.ts: the one abortable sleep waits, ends early on abort, and never rejects for it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sleep } from '../../../core/sleep.js';

test('waits about as long as asked without a signal, and at once for zero or less', async () => {
  let t = performance.now();
  await sleep(50);
  assert.ok(performance.now() - t >= 45, `${performance.now() - t} ms`);
  t = performance.now();
  await sleep(-5);
  assert.ok(performance.now() - t < 45);
});

test('an abort ends it early and resolves, whether it comes before or during the sleep', async () => {
  const ac = new AbortController();
  const t = performance.now();
  setTimeout(() => ac.abort(), 20);
  await sleep(10_000, ac.signal);
  assert.ok(performance.now() - t < 5_000, 'did not end at the abort');
  await sleep(10_000, ac.signal);
  assert.ok(performance.now() - t < 5_000, 'an aborted signal did not end it at once');
});
