import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DataplaneSample, type AgentMessage } from '../../gen/cnibench/v1/agent.js';
import { Outbox } from '../../agent/outbox.js';

const sample = (t: number) => ({ $case: 'sample' as const, value: DataplaneSample.fromPartial({ runId: 'r', samplingJobId: 'j', timeMs: t }) });

test('numbers messages from 1 and replays everything unacknowledged on attach', () => {
  const box = new Outbox(10);
  box.push(sample(1));
  box.push(sample(2));
  box.push(sample(3));
  box.ack(1);
  const sent: AgentMessage[] = [];
  box.attach((m) => sent.push(m));
  assert.deepEqual(sent.map((m) => m.seq), [2, 3]);
  box.push(sample(4));
  assert.deepEqual(sent.map((m) => m.seq), [2, 3, 4]);
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
  box.attach((m) => sent.push(m.seq));
  assert.deepEqual(sent, [5, 6, 7]);
});

test('a limit below one is refused', () => {
  assert.throws(() => new Outbox(0), RangeError);
});
