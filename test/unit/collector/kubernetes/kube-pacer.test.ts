/**
 * The Pacer's rules as pure logic (a fake call stands in for the apiserver
 * here; the real apiserver is in test/integration/k8s-frontend.test.ts): what
 * is retried, Retry-After, the in-flight bound, the token bucket, and errors
 * that name the call.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isRetryable, Pacer, statusOf } from '../../../../collector/kubernetes/pacer.js';
import { isCniBenchError } from '../../../../core/errors.js';

const fast = { qps: 1000, burst: 1000, parallelism: 4, maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5 };
const apiError = (code: number, headers: Record<string, string> = {}) =>
  Object.assign(new Error(`HTTP-Code: ${code}`), { code, headers });

test('429, 5xx and dropped connections are retried; 4xx are not', () => {
  assert.equal(isRetryable(apiError(429)), true);
  assert.equal(isRetryable(apiError(503)), true);
  assert.equal(isRetryable(apiError(500)), true);
  assert.equal(isRetryable(apiError(403)), false);
  assert.equal(isRetryable(apiError(409)), false);
  assert.equal(isRetryable(Object.assign(new Error('reset'), { code: 'ECONNRESET' })), true);
  assert.equal(isRetryable(new Error('plain')), false);
  assert.deepEqual(statusOf(apiError(429, { 'retry-after': '2' })), { status: 429, retryAfterS: 2 });
});

test('a call that fails twice with 429 then succeeds is retried and counted', async () => {
  const pacer = new Pacer(fast);
  let calls = 0;
  const v = await pacer.run('create service x', async () => {
    calls++;
    if (calls < 3) throw apiError(429);
    return 'ok';
  });
  assert.equal(v, 'ok');
  assert.equal(calls, 3);
  assert.equal(pacer.retries, 2);
});

test('a 403 fails at once with a coded error naming the call and the status', async () => {
  const pacer = new Pacer(fast);
  let calls = 0;
  await assert.rejects(
    pacer.run('create service ns/x', async () => {
      calls++;
      throw apiError(403);
    }),
    (err: unknown) =>
      isCniBenchError(err, 'E_KUBERNETES') && /create service ns\/x: HTTP 403/.test((err as Error).message),
  );
  assert.equal(calls, 1);
});

test('retries stop at maxRetries and the error says how many', async () => {
  const pacer = new Pacer(fast);
  await assert.rejects(
    pacer.run('delete x', async () => {
      throw apiError(503);
    }),
    /delete x: HTTP 503 after 3 retries/,
  );
});

test('Retry-After wins over the exponential backoff, capped by maxDelayMs', () => {
  const pacer = new Pacer({ ...fast, maxDelayMs: 10_000 }, Date.now, () => 0.5);
  assert.equal(pacer.delayMs(0, 2), 2000);
  assert.equal(pacer.delayMs(3), Math.floor(0.5 * 8)); // base 1 ms * 2^3, half of it
  assert.equal(new Pacer({ ...fast, maxDelayMs: 100 }).delayMs(0, 60), 100);
});

test('no more than `parallelism` calls are in flight', async () => {
  const pacer = new Pacer({ ...fast, parallelism: 3 });
  let inFlight = 0;
  let peak = 0;
  await Promise.all(
    Array.from({ length: 20 }, () =>
      pacer.run('x', async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
      }),
    ),
  );
  assert.equal(peak, 3);
});

test('the token bucket lets `burst` through at once, then `qps` per second', async () => {
  let now = 0;
  const pacer = new Pacer({ ...fast, qps: 10, burst: 5, parallelism: 100 }, () => now);
  const started: number[] = [];
  // Advance the fake clock whenever the pacer sleeps: each real wait of ~100 ms is one token at 10 qps.
  const clock = setInterval(() => (now += 10), 1);
  await Promise.all(Array.from({ length: 8 }, () => pacer.run('x', async () => void started.push(now))));
  clearInterval(clock);
  assert.equal(started.filter((t) => t === 0).length, 5, `burst of 5 at t=0, got ${JSON.stringify(started)}`);
  assert.ok(started.filter((t) => t > 0).length === 3);
});

test('bad limits are refused naming the field', () => {
  assert.throws(() => new Pacer({ ...fast, qps: 0 }), /kubernetes\.qps: must be positive/);
  assert.throws(() => new Pacer({ ...fast, parallelism: -1 }), /kubernetes\.parallelism/);
});
