import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Store } from '../../../../collector/store/store.js';
import { WriteQueue } from '../../../../collector/store/write-queue.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { DataplaneSample } from '../../../../gen/cnibench/v1/agent.js';

const rec = (t: number) => ({
  runId: 'r',
  agentId: 'a',
  sample: DataplaneSample.fromPartial({ runId: 'r', samplingJobId: 'j', timeMs: t }),
});

test('records commit in batches of at most maxBatch, in order, and each add resolves only after its commit', async () => {
  const store = new Store(':memory:');
  const q = new WriteQueue(store, { maxBatch: 10, maxDelayMs: 5, highWater: 1000, lowWater: 100 });
  const done: number[] = [];
  const all = Array.from({ length: 25 }, (_, i) =>
    q.addSample(rec(i)).then(() => {
      assert.ok(
        store.samples('r').some((s) => s.sample.timeMs === i),
        'in the store when its promise resolves',
      );
      done.push(i);
    }),
  );
  assert.equal(store.samples('r').length, 0, 'nothing is written on the caller\u2019s turn');
  await Promise.all(all);
  assert.deepEqual(
    done,
    Array.from({ length: 25 }, (_, i) => i),
  );
  assert.equal(q.stats.batches, 3, '10 + 10 + 5');
  assert.equal(q.stats.records, 25);
  store.close();
});

test('a barrier resolves after everything queued before it, and at once on an empty queue', async () => {
  const store = new Store(':memory:');
  const q = new WriteQueue(store, { maxBatch: 100, maxDelayMs: 20, highWater: 1000, lowWater: 100 });
  const order: string[] = [];
  void q.addSample(rec(1)).then(() => order.push('sample'));
  await q.barrier().then(() => order.push('barrier'));
  assert.deepEqual(order, ['sample', 'barrier']);
  await q.barrier();
  store.close();
});

test('full at highWater, drained below lowWater', async () => {
  const store = new Store(':memory:');
  const q = new WriteQueue(store, { maxBatch: 4, maxDelayMs: 5, highWater: 8, lowWater: 3 });
  const events: string[] = [];
  q.on('full', () => events.push(`full@${q.queued}`));
  q.on('drained', () => events.push(`drained@${q.queued}`));
  const all = Array.from({ length: 10 }, (_, i) => q.addSample(rec(i)));
  assert.equal(q.full, true);
  await Promise.all(all);
  assert.equal(q.full, false);
  assert.deepEqual(events, ['full@8', 'drained@2']);
  store.close();
});

test('a failed transaction rejects every entry of its batch with E_STORE naming the path; nothing of it is kept', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cnib-wq-'));
  try {
    const path = join(dir, 'c.db');
    const store = new Store(path);
    const q = new WriteQueue(store, { maxBatch: 100, maxDelayMs: 5, highWater: 1000, lowWater: 100 });
    await q.addSample(rec(0));
    // A trigger makes the second insert of the next batch fail inside its transaction (unit test of the rollback;
    // the real full disk is test/integration/collector-faults.test.ts).
    const side = new (await import('node:sqlite')).DatabaseSync(path);
    side.exec(
      "CREATE TRIGGER boom BEFORE INSERT ON samples WHEN NEW.time_ms = 2 BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
    );
    side.close();
    const a = q.addSample(rec(1));
    const b = q.addSample(rec(2));
    const c = q.barrier();
    for (const p of [a, b, c])
      await assert.rejects(p, (e) => isCniBenchError(e, 'E_STORE') && e.message.includes(path));
    assert.deepEqual(
      store.samples('r').map((s) => s.sample.timeMs),
      [0],
      'the batch rolled back as a whole',
    );
    assert.equal(q.stats.failures, 1);
    await q.addSample(rec(3));
    assert.equal(q.lastError, undefined, 'a later commit clears the error');
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
