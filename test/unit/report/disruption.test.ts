import assert from 'node:assert/strict';
import { test } from 'node:test';
import { probeStream } from '../../../agent/drivers/probe-stream.js';
import { JobResult } from '../../../gen/cnibench/v1/agent.js';
import { type Attempt, binAttempts, parseTimeline, summariseDisruption } from '../../../report/disruption.js';
import { disruptionCharts } from '../../../report/disruption-html.js';
import { renderDisruptions } from '../../../report/disruption-render.js';
import { buildDisruptions, type DisruptionEntry, errorsAfterEvent } from '../../../report/disruption-report.js';
import type { PhaseRecord, ResultRecord } from '../../../report/records.js';
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
  // One hiccup (a single 20 ms request, the maximum of its 10-attempt bin) is not a slow p99: 1 of the 100 it is judged over.
  const hiccup = summariseDisruption(
    {
      ...t,
      bins: binAttempts(
        stream((at, kind) => (kind === 'kept' && at === 1500 ? { latencyUs: 20_000 } : {})),
        100,
        3000,
      ),
    },
    1000,
  );
  assert.equal(hiccup.kinds[1]?.recoveredAfterMs, 0);
  // Two of them in one judged window are (p99 of 100 is the second highest): slow until that bin's end.
  const two = summariseDisruption(
    {
      ...t,
      bins: binAttempts(
        stream((at, kind) => (kind === 'kept' && (at === 1500 || at === 1510) ? { latencyUs: 20_000 } : {})),
        100,
        3000,
      ),
    },
    1000,
  );
  assert.equal(two.kinds[1]?.recoveredAfterMs, 600);
  // Within 1 ms of the baseline is never slow, however many times it is: 0.2 ms -> 0.9 ms for the rest of the stream.
  const creep = summariseDisruption(
    {
      ...t,
      bins: binAttempts(
        stream((at) => ({ latencyUs: at < 1000 ? 200 : 900 })),
        100,
        3000,
      ),
    },
    1000,
  );
  for (const k of creep.kinds) {
    assert.equal(k.recoveredAfterMs, 0);
    const base = k.baseline.p99Us ?? 0;
    assert.ok(base >= 190 && base <= 210, `baseline p99 ${base}`);
    assert.equal(k.thresholds.p99Us, base + 1000);
  }
});

test("a run's disruption phases become report entries: the event on the stream's clock, or why there is none; rendered as text and charts", () => {
  const out = fixture('probe-stream/refused.json');
  const t = parseTimeline(out);
  const measurement = probeStream.parse(out, { targetHost: '', targetPort: 1, durationSeconds: 1 });
  const phase = (index: number, firedMs: number): PhaseRecord => ({
    runId: 'r',
    index,
    name: `phase ${index}`,
    state: 'succeeded',
    error: '',
    startedMs: 1,
    endedMs: 2,
    detail: {
      disruption: { event: 'backend-gone', firedMs, doneMs: firedMs + 7, did: { serverStopped: '198.18.0.5:8179' } },
    },
  });
  const result = (phaseIndex: number): ResultRecord => ({
    runId: 'r',
    phaseIndex,
    agentId: 'n1',
    warmup: false,
    result: JobResult.fromPartial({ tool: 'probe-stream', measurement }),
  });
  const entries = buildDisruptions(
    [phase(0, t.startMs + 200), phase(1, t.startMs - 50), phase(2, t.startMs + 200), { ...phase(3, 0), detail: {} }],
    [result(0), result(1)],
  );
  assert.equal(entries.length, 3, 'a phase without an event is no entry');
  const [ok, early, none] = entries as [DisruptionEntry, DisruptionEntry, DisruptionEntry];
  assert.equal(ok.summary?.eventAtMs, 200);
  assert.equal(ok.eventTookMs, 7);
  assert.equal(
    errorsAfterEvent(ok),
    ok.summary?.kinds.reduce((a, k) => a + k.errorsAfter, 0),
  );
  assert.match(early.problem ?? '', /event at -50 ms is not inside the timeline/);
  assert.equal(errorsAfterEvent(early), null);
  assert.match(none.problem ?? '', /no probe-stream result/);
  const text = renderDisruptions(entries).join('\n');
  assert.match(text, /## Disruption: phase 0[\s\S]*serverStopped 198\.18\.0\.5:8179; the control plane took 7 ms/);
  assert.match(text, /## Disruption: phase 2\n\n[^\n]*\n\nNo timeline: no probe-stream result/);
  const html = disruptionCharts(entries);
  assert.equal((html.match(/<svg/g) ?? []).length, 2, 'two charts for the one phase with a timeline');
  assert.match(html, /class="crossover" data-x="2\.000"/);
});
