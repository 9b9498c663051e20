/**
 * report/progress.ts on run records shaped as the store holds them: phase k
 * of n, sweep step, round by the clock, what is awaited, elapsed and the
 * remaining estimate; and cli/progress.ts printing text on a TTY and JSON
 * lines elsewhere, once per change.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { followProgress } from '../../../cli/progress.js';
import { type ProgressPhase, type ProgressRun, progressOf, progressText } from '../../../report/progress.js';

const m = (rounds: number, d = 2, w = 1) => ({ measurement: { durationSeconds: d, warmupSeconds: w, rounds } });
const T0 = 1_000_000;

function phase(index: number, state: string, startedS: number, endedS: number, detail: unknown): ProgressPhase {
  return {
    index,
    name: `p${index}`,
    state,
    startedMs: startedS ? T0 + startedS * 1000 : 0,
    endedMs: endedS ? T0 + endedS * 1000 : 0,
    detail,
  };
}

function run(phases: ProgressPhase[], state = 'running'): ProgressRun {
  return { id: 'r1', state, createdMs: T0, startedMs: T0, endedMs: 0, scenario: { roundSleepSeconds: 1 }, phases };
}

test('a plain run: phase k of n, round by the clock, remaining from how long finished phases took against their plan', () => {
  // Plan of each phase: 1 s warm-up + 3 x 2 s + 2 x 1 s pause = 9 s; the first took 18 s (twice its plan).
  const r = run([
    phase(0, 'succeeded', 0.001, 18, m(3)),
    phase(1, 'running', 18, 0, m(3)),
    phase(2, 'pending', 0, 0, m(3)),
  ]);
  const at = (s: number) => progressOf(r, T0 + s * 1000);
  assert.deepEqual(at(18.5).phase, { k: 2, n: 3, name: 'p1' });
  assert.equal(at(18.5).waitingFor, 'warm-up');
  assert.deepEqual(at(20).round, { k: 1, n: 3 });
  assert.equal(at(20).waitingFor, 'round');
  assert.equal(at(21.5).waitingFor, 'pause');
  assert.deepEqual(at(22).round, { k: 2, n: 3 });
  assert.deepEqual(at(25).round, { k: 3, n: 3 });
  assert.equal(at(20).elapsedS, 20);
  // Left: phase 1 (18 s scaled) minus the 2 s it has run, plus phase 2 (18 s).
  assert.equal(at(20).remainingS, 34);
  assert.equal(progressOf(run([phase(0, 'running', 0.001, 0, m(3))]), T0 + 2000).remainingS, null, 'no basis yet');
});

test('a sweep: the step and its Services, programming then sync', () => {
  const scale = (services: number, extra: object = {}) => ({ scale: { services, endpointsPerService: 4 }, ...extra });
  const phases = [
    phase(0, 'succeeded', 0.001, 3, scale(0, { programmingMs: 10, syncMs: 200 })),
    phase(1, 'succeeded', 3, 12, { ...m(3), step: 0 }),
    phase(2, 'running', 12, 0, scale(5000)),
    phase(3, 'pending', 0, 0, { ...m(3), step: 5000 }),
  ];
  let p = progressOf(run(phases), T0 + 13_000);
  assert.deepEqual(p.step, { k: 2, n: 2, services: 5000 });
  assert.equal(p.waitingFor, 'programming');
  phases[2] = phase(2, 'running', 12, 0, scale(5000, { programmingMs: 900 }));
  p = progressOf(run(phases), T0 + 14_000);
  assert.equal(p.waitingFor, 'sync');
  assert.equal(p.round, null);
  assert.match(
    progressText(p),
    /^\[3\/4\] p2 · step 2\/2 \(5,000 Services\) · waiting for every node's dataplane to sync · 14s elapsed, ~\d+s left$/,
  );
});

test('an ended run: no wait, nothing left, elapsed up to its end', () => {
  const r = { ...run([phase(0, 'succeeded', 0.001, 9, m(3))], 'succeeded'), endedMs: T0 + 10_000 };
  const p = progressOf(r, T0 + 99_000);
  assert.equal(p.waitingFor, null);
  assert.equal(p.remainingS, 0);
  assert.equal(p.elapsedS, 10);
  assert.match(progressText(p), / · succeeded · 10s elapsed$/);
});

test('followProgress: JSON lines only on a change when not a TTY; text rewritten in place on a TTY', async () => {
  let now = T0 + 500;
  const r = run([phase(0, 'running', 0.001, 0, m(3)), phase(1, 'pending', 0, 0, m(3))]);
  for (const isTTY of [false, true]) {
    now = T0 + 500;
    const out: string[] = [];
    const f = followProgress(() => r, {
      style: 'auto',
      intervalMs: 10,
      now: () => now,
      sink: { isTTY, write: (s) => out.push(s) },
    });
    await new Promise((res) => setTimeout(res, 60));
    now = T0 + 2500; // warm-up over: round 1
    await new Promise((res) => setTimeout(res, 60));
    await f.stop();
    if (!isTTY) {
      const lines = out
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(
        lines.map((l) => [l.msg, l.waitingFor, l.round?.k]),
        [
          ['progress', 'warm-up', 1],
          ['progress', 'round', 1],
        ],
      );
    } else {
      const text = out.join('');
      assert.ok(text.includes('\r\x1b[2K[1/2] p0 · round 1/3 · warm-up'), JSON.stringify(text));
      assert.ok(text.includes('\n[1/2] p0 · round 1/3 · measuring'), JSON.stringify(text));
      assert.ok(text.endsWith('\n'));
    }
  }
});
