/** A disruption report entry as `cni-bench lab --json` prints it, and the checks every lab disruption test makes of it. */
import assert from 'node:assert/strict';

export interface KindSummary {
  kind: 'new' | 'kept';
  baseline: { errorShare: number; attempts: number };
  attemptsAfter: number;
  errorsAfter: number;
  errorsByReason: Record<string, number>;
  recoveredAfterMs: number;
  recovered: boolean;
}
export interface Bin {
  attempts: number;
  errors: Record<string, number>;
}
export interface Entry {
  name: string;
  event: { event: string; firedMs: number; doneMs: number; did: Record<string, unknown>; error?: string };
  timeline: { startMs: number; binMs: number; bins: { new: Bin; kept: Bin }[] };
  summary: { eventAtMs: number; kinds: KindSummary[] };
}

export const errorsOf = (b: Bin): number => Object.values(b.errors).reduce((a, v) => a + v, 0);

/**
 * The summary agrees with the bins, the event is inside the stream after a
 * clean baseline and the stream kept its rate (`rate` new connections a
 * second for `seconds`); returns the new-connection summary.
 */
export function checkEntry(e: Entry, stream: { rate: number; seconds: number }): KindSummary {
  const { timeline: t, summary: s } = e;
  assert.equal(s.eventAtMs, e.event.firedMs - t.startMs);
  const first = Math.floor(s.eventAtMs / t.binMs);
  assert.ok(first >= 10 && first < t.bins.length - 10, `${e.name}: event in bin ${first} of ${t.bins.length}`);
  const total = t.bins.reduce((a, b) => a + b.new.attempts, 0);
  const planned = stream.rate * stream.seconds;
  assert.ok(total >= planned * 0.95, `${e.name}: ${total} new-connection attempts of ${planned}`);
  for (const k of s.kinds) {
    const after = t.bins.slice(first).map((b) => b[k.kind]);
    assert.equal(
      k.errorsAfter,
      after.reduce((a, b) => a + errorsOf(b), 0),
      `${e.name} ${k.kind}: errors after`,
    );
    assert.equal(
      k.attemptsAfter,
      after.reduce((a, b) => a + b.attempts, 0),
      `${e.name} ${k.kind}: attempts after`,
    );
    assert.equal(k.baseline.errorShare, 0, `${e.name} ${k.kind}: errors before the event`);
  }
  return s.kinds.find((k) => k.kind === 'new') as KindSummary;
}
