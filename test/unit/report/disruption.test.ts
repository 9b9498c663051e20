import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Attempt, binAttempts, parseTimeline, summariseDisruption } from '../../../report/disruption.js';
import { fixture } from '../../support/helpers/fixtures.js';

test('parseTimeline reads the probe stream of a real run, bin by bin', () => {
  const t = parseTimeline(fixture('probe-stream/ok-localhost.json'));
  assert.equal(t.binMs, 100);
  assert.equal(t.rate, 50);
  assert.equal(t.bins.length, 10);
  for (const b of t.bins) {
    assert.equal(b.new.attempts, 5);
    assert.equal(b.kept.histogram.total, 5);
    assert.deepEqual(b.kept.errors, {});
  }
  const refused = parseTimeline(fixture('probe-stream/refused.json'));
  assert.deepEqual(refused.bins[0]?.new.errors, { ECONNREFUSED: 2 });
});

test('parseTimeline: truncated or inconsistent output is an error naming probe-stream', () => {
  assert.throws(() => parseTimeline(fixture('probe-stream/truncated.json')), /probe-stream.*not one JSON line/s);
  const doc = JSON.parse(fixture('probe-stream/ok-localhost.json'));
  doc.bins[3].kept.attempts = 6;
  assert.throws(() => parseTimeline(JSON.stringify(doc)), /bin 3 'kept'.*!= 6 attempts/);
  assert.throws(() => parseTimeline('{"tool":"probe-stream","error":"never connected"}'), /never connected/);
});

/** 100 attempts/s of each kind for 3 s, every one ok at 1 ms, except what `change` says. */
function stream(change: (atMs: number, kind: Attempt['kind']) => Partial<Attempt> = () => ({})): Attempt[] {
  const out: Attempt[] = [];
  for (let at = 0; at < 3000; at += 10)
    for (const kind of ['new', 'kept'] as const) out.push({ atMs: at, kind, latencyUs: 1000, ...change(at, kind) });
  return out.map((a) => (a.reason ? { atMs: a.atMs, kind: a.kind, reason: a.reason } : a));
}

test('summariseDisruption: errors and slow bins after the event, and when the stream was back at its baseline', () => {
  // New connections refused from 1,000 to 1,450 ms; kept requests slow (50 ms) from 1,000 to 1,750 ms.
  const attempts = stream((at, kind) => {
    if (kind === 'new' && at >= 1000 && at < 1450) return { reason: 'ECONNREFUSED' };
    if (kind === 'kept' && at >= 1000 && at < 1750) return { latencyUs: 50_000 };
    return {};
  });
  const t = { startMs: 0, binMs: 100, rate: 100, bins: binAttempts(attempts, 100, 3000) };
  assert.equal(t.bins.length, 30);
  assert.equal(t.bins[10]?.new.errors.ECONNREFUSED, 10);
  assert.equal(t.bins[14]?.new.errors.ECONNREFUSED, 5);
  const s = summariseDisruption(t, 1000);
  const [n, k] = s.kinds;
  assert.equal(n?.errorsAfter, 45);
  assert.deepEqual(n?.errorsByReason, { ECONNREFUSED: 45 });
  assert.equal(n?.firstErrorMs, 0);
  // The last bin with errors is 1,400-1,500 ms.
  assert.equal(n?.recoveredAfterMs, 500);
  assert.equal(n?.baseline.errorShare, 0);
  assert.equal(k?.errorsAfter, 0);
  assert.equal(k?.firstErrorMs, null);
  assert.equal(k?.recoveredAfterMs, 800);
  assert.ok((k?.thresholds.p99Us ?? 0) < 50_000);
  // Nothing happening: nothing to recover from.
  const calm = summariseDisruption({ ...t, bins: binAttempts(stream(), 100, 3000) }, 1000);
  assert.deepEqual(
    calm.kinds.map((x) => [x.errorsAfter, x.recoveredAfterMs]),
    [
      [0, 0],
      [0, 0],
    ],
  );
  assert.throws(() => summariseDisruption(t, 50), /event at 50 ms is not inside the timeline/);
});
