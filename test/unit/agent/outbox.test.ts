import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Outbox } from '../../../agent/outbox.js';
import { type AgentMessage, DataplaneSample } from '../../../gen/cnibench/v1/agent.js';

const sample = (t: number) => ({
  $case: 'sample' as const,
  value: DataplaneSample.fromPartial({ runId: 'r', samplingJobId: 'j', timeMs: t }),
});

test('numbers messages from 1 and replays everything unacknowledged on attach', () => {
  const box = new Outbox(10);
  box.push(sample(1));
  box.push(sample(2));
  box.push(sample(3));
  box.ack(1);
  const sent: AgentMessage[] = [];
  box.attach((m) => void sent.push(m));
  assert.deepEqual(
    sent.map((m) => m.seq),
    [2, 3],
  );
  box.push(sample(4));
  assert.deepEqual(
    sent.map((m) => m.seq),
    [2, 3, 4],
  );
  box.detach();
  box.push(sample(5));
  assert.equal(sent.length, 3);
  assert.equal(box.size, 4);
});

test('cumulative ack drops everything up to the sequence number', () => {
  const box = new Outbox(10);
  for (let i = 0; i < 5; i++) box.push(sample(i));
  box.ack(4);
  assert.equal(box.size, 1);
  box.ack(2);
  assert.equal(box.size, 1);
});

test('overflow drops the oldest and counts every loss', () => {
  const box = new Outbox(3);
  for (let i = 0; i < 7; i++) box.push(sample(i));
  assert.equal(box.size, 3);
  assert.equal(box.dropped, 4);
  const sent: number[] = [];
  box.attach((m) => void sent.push(m.seq));
  assert.deepEqual(sent, [5, 6, 7]);
});

test('a limit below one is refused', () => {
  assert.throws(() => new Outbox(0), RangeError);
});

test('the byte bound drops the oldest too, and counts it', () => {
  const box = new Outbox(1000, 4096);
  const big = (t: number) => ({
    $case: 'sample' as const,
    value: DataplaneSample.fromPartial({ runId: 'r', samplingJobId: 'j', timeMs: t, errors: ['x'.repeat(1000)] }),
  });
  for (let i = 0; i < 10; i++) box.push(big(i));
  assert.ok(box.bytes <= 4096, String(box.bytes));
  assert.ok(box.size >= 3 && box.size <= 4, String(box.size));
  assert.equal(box.dropped, 10 - box.size);
  box.ack(1000);
  assert.equal(box.bytes, 0);
});

test('replay honours flow control: a full stream pauses it, resume goes on where it stopped, nothing twice', () => {
  const box = new Outbox(100);
  for (let i = 0; i < 10; i++) box.push(sample(i));
  const sent: number[] = [];
  let room = 3;
  box.attach((m) => {
    sent.push(m.seq);
    return --room > 0;
  });
  assert.deepEqual(sent, [1, 2, 3]);
  box.push(sample(11));
  assert.deepEqual(sent, [1, 2, 3], 'paused: new messages wait too');
  room = 100;
  box.resume();
  assert.deepEqual(sent, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  box.ack(5);
  box.push(sample(12));
  assert.deepEqual(sent.slice(-1), [12]);
  sent.length = 0;
  box.attach((m) => void sent.push(m.seq));
  assert.deepEqual(sent, [6, 7, 8, 9, 10, 11, 12], 'a new stream replays what is unacknowledged');
});

test('a reconnect replays in bounded batches: at most maxInFlight unacknowledged, each ack releases the next', () => {
  const box = new Outbox(10_000, 16 * 1024 * 1024, 4);
  for (let i = 0; i < 10; i++) box.push(sample(i));
  const sent: number[] = [];
  box.attach((m) => void sent.push(m.seq));
  assert.deepEqual(sent, [1, 2, 3, 4], 'the first batch');
  assert.equal(box.inFlight, 4);
  box.push(sample(11));
  assert.deepEqual(sent, [1, 2, 3, 4], 'new messages wait behind the window too');
  box.ack(2);
  assert.deepEqual(sent, [1, 2, 3, 4, 5, 6], 'two acknowledged, two more sent');
  box.ack(6);
  assert.deepEqual(sent, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  box.ack(10);
  assert.deepEqual(sent.slice(-1), [11]);
  assert.equal(box.inFlight, 1);
  assert.throws(() => new Outbox(10, 4096, 0), RangeError);
});
