/**
 * Where a run is, from its record and phases as the store (or GET
 * /v1/runs/{id}) holds them: phase k of n, the sweep step, the round, what is
 * being waited for, elapsed and estimated remaining time. Pure: the lab, the
 * sweep and `cni-bench run` feed it the run they poll, and print each change
 * as a line for people (a terminal) or as JSON lines (a pipe, `--log json`).
 */

export interface ProgressPhase {
  index: number;
  name: string;
  state: string;
  startedMs: number;
  endedMs: number;
  detail: unknown;
}

export interface ProgressRun {
  id: string;
  state: string;
  createdMs: number;
  startedMs: number;
  endedMs: number;
  scenario: unknown;
  phases: readonly ProgressPhase[];
}

export type Waiting = 'start' | 'programming' | 'sync' | 'warm-up' | 'round' | 'pause' | 'cleanup' | null;

export interface Progress {
  runId: string;
  state: string;
  /** 1-based phase being run (the last one once the run has ended), of all phases. */
  phase: { k: number; n: number; name: string } | null;
  /** The sweep step (1-based) and its Services, in a Service scale sweep. */
  step: { k: number; n: number; services: number } | null;
  /**
   * The round under way (1-based) of the measurement's rounds, told by the
   * clock from the phase's start and its planned warm-up, rounds and pauses
   * (the run record carries no per-round event), so it can run ahead of a
   * slow server start by a few seconds.
   */
  round: { k: number; n: number } | null;
  waitingFor: Waiting;
  elapsedS: number;
  /** Null until a phase has ended (no basis for an estimate). */
  remainingS: number | null;
}

interface MeasureDetail {
  measurement?: { durationSeconds?: number; warmupSeconds?: number; rounds?: number };
  scale?: { services: number };
  programmingMs?: number;
  syncMs?: number;
  step?: number;
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

function roundSleepOf(scenario: unknown): number {
  const s = (scenario as { roundSleepSeconds?: unknown } | null)?.roundSleepSeconds;
  return typeof s === 'number' ? s : 0;
}

/** Seconds a phase is planned to take from its spec (measure: warm-up and rounds; scale: unknown, 0). */
export function plannedSeconds(p: ProgressPhase, roundSleep: number): number {
  const m = (p.detail as MeasureDetail | null)?.measurement;
  if (!m?.durationSeconds) return 0;
  const rounds = m.rounds ?? 1;
  return (m.warmupSeconds ?? 0) + rounds * m.durationSeconds + Math.max(0, rounds - 1) * roundSleep;
}

/**
 * Remaining time: the planned seconds left, scaled by how long the finished
 * phases took against their plan (start-up, samples, sync are not in the
 * plan), plus, for scale phases, the mean a finished scale phase took.
 */
function remaining(run: ProgressRun, now: number, roundSleep: number): number | null {
  const done = run.phases.filter((p) => TERMINAL.has(p.state) && p.startedMs > 0 && p.endedMs >= p.startedMs);
  if (!done.length) return null;
  const took = (p: ProgressPhase) => (p.endedMs - p.startedMs) / 1000;
  const doneMeasure = done.filter((p) => plannedSeconds(p, roundSleep) > 0);
  const doneScale = done.filter((p) => plannedSeconds(p, roundSleep) === 0);
  const planned = doneMeasure.reduce((s, p) => s + plannedSeconds(p, roundSleep), 0);
  const ratio = planned > 0 ? doneMeasure.reduce((s, p) => s + took(p), 0) / planned : 1;
  const scaleMean = doneScale.length ? doneScale.reduce((s, p) => s + took(p), 0) / doneScale.length : 0;
  let left = 0;
  for (const p of run.phases) {
    if (TERMINAL.has(p.state)) continue;
    const plan = plannedSeconds(p, roundSleep);
    const whole = plan > 0 ? plan * ratio : scaleMean;
    left += p.state === 'running' && p.startedMs > 0 ? Math.max(0, whole - (now - p.startedMs) / 1000) : whole;
  }
  return Math.round(left);
}

function stepOf(run: ProgressRun, at: number): Progress['step'] {
  const scale = run.phases.filter((p) => (p.detail as MeasureDetail | null)?.scale);
  if (!scale.length) return null;
  let k = 0;
  for (const p of run.phases.slice(0, at + 1)) if ((p.detail as MeasureDetail | null)?.scale) k++;
  const cur = scale[Math.max(0, k - 1)];
  return {
    k: Math.max(1, k),
    n: scale.length,
    services: (cur?.detail as MeasureDetail | undefined)?.scale?.services ?? 0,
  };
}

/** Round and wait of a running phase: a scale phase programs then syncs; a measure phase by the clock from its spec. */
function roundOf(p: ProgressPhase, now: number, roundSleep: number): Pick<Progress, 'round' | 'waitingFor'> {
  const d = p.detail as MeasureDetail | null;
  if (d?.scale) {
    return { round: null, waitingFor: d.programmingMs === undefined ? 'programming' : 'sync' };
  }
  const m = d?.measurement;
  if (!m?.durationSeconds) return { round: null, waitingFor: null };
  const n = m.rounds ?? 1;
  const t = (now - p.startedMs) / 1000 - (m.warmupSeconds ?? 0);
  if (t < 0) return { round: { k: 1, n }, waitingFor: 'warm-up' };
  const per = m.durationSeconds + roundSleep;
  const k = Math.min(n, Math.floor(t / per) + 1);
  const inPause = t % per > m.durationSeconds && k < n;
  return { round: { k, n }, waitingFor: inPause ? 'pause' : 'round' };
}

export function progressOf(run: ProgressRun, now: number): Progress {
  const roundSleep = roundSleepOf(run.scenario);
  const n = run.phases.length;
  const runningAt = run.phases.findIndex((p) => p.state === 'running');
  const lastStarted = run.phases.reduce((a, p, i) => (p.startedMs > 0 ? i : a), -1);
  const at = runningAt >= 0 ? runningAt : lastStarted;
  const cur = at >= 0 ? run.phases[at] : undefined;
  const ended = TERMINAL.has(run.state);
  const begin = run.startedMs || run.createdMs;
  const base = {
    runId: run.id,
    state: run.state,
    phase: cur ? { k: at + 1, n, name: cur.name } : null,
    step: at >= 0 ? stepOf(run, at) : null,
    elapsedS: Math.max(0, Math.round(((ended && run.endedMs ? run.endedMs : now) - begin) / 1000)),
  };
  if (ended) return { ...base, round: null, waitingFor: null, remainingS: 0 };
  if (runningAt < 0) {
    const allPending = run.phases.every((p) => p.state === 'pending');
    return {
      ...base,
      round: null,
      waitingFor: allPending ? 'start' : 'cleanup',
      remainingS: remaining(run, now, roundSleep),
    };
  }
  return {
    ...base,
    ...roundOf(run.phases[runningAt] as ProgressPhase, now, roundSleep),
    remainingS: remaining(run, now, roundSleep),
  };
}

function clock(s: number): string {
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = Math.floor(s % 60);
  return h ? `${h}h${String(m).padStart(2, '0')}m` : m ? `${m}m${String(sec).padStart(2, '0')}s` : `${sec}s`;
}

const WAIT_TEXT: Record<Exclude<Waiting, null>, string> = {
  start: 'waiting for the run to start',
  programming: 'programming Services',
  sync: "waiting for every node's dataplane to sync",
  'warm-up': 'warm-up',
  round: 'measuring',
  pause: 'pause between rounds',
  cleanup: 'cleaning up',
};

/** One line for a person: "[2/8] HTTP keepalive c64 service · step 2/4 (1,000 Services) · round 2/3 · measuring · 0m42s elapsed, ~1m10s left". */
export function progressText(p: Progress): string {
  const parts: string[] = [];
  parts.push(p.phase ? `[${p.phase.k}/${p.phase.n}] ${p.phase.name}` : `run ${p.runId}`);
  if (p.step) parts.push(`step ${p.step.k}/${p.step.n} (${p.step.services.toLocaleString('en-US')} Services)`);
  if (p.round) parts.push(`round ${p.round.k}/${p.round.n}`);
  if (p.waitingFor) parts.push(WAIT_TEXT[p.waitingFor]);
  if (TERMINAL.has(p.state)) parts.push(p.state);
  const left = p.remainingS === null ? '' : TERMINAL.has(p.state) ? '' : `, ~${clock(p.remainingS)} left`;
  parts.push(`${clock(p.elapsedS)} elapsed${left}`);
  return parts.join(' · ');
}

/** What changed enough to print again: a new phase, step, round or wait, or a state change (not the clocks). */
export function progressKey(p: Progress): string {
  return [p.state, p.phase?.k, p.step?.k, p.round?.k, p.waitingFor].join('|');
}

/** One JSON line (the logger's shape: t, level, msg), so a pipe of logs and progress reads as one stream. */
export function progressJson(p: Progress, now: number): string {
  return `${JSON.stringify({ t: new Date(now).toISOString(), level: 'info', msg: 'progress', ...p })}\n`;
}
