/**
 * Durable state of the collector: runs, their phases, raw results and dataplane
 * samples, in SQLite (node:sqlite, no native add-on). Raw tool output is kept
 * with every result so any number in a report can be audited later.
 */
import { mkdirSync, type Stats, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { DataplaneSample, JobResult } from '../../gen/cnibench/v1/agent.js';
import type { PhaseRecord, ResultRecord, RunRecord, RunState, SampleRecord } from '../../report/records.js';

export {
  type PhaseRecord,
  type ResultRecord,
  type RunRecord,
  type RunState,
  type SampleRecord,
  TERMINAL_STATES,
} from '../../report/records.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY, state TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL, started_ms INTEGER NOT NULL DEFAULT 0, ended_ms INTEGER NOT NULL DEFAULT 0,
  scenario_json TEXT NOT NULL, cluster_json TEXT NOT NULL DEFAULT '{}');
CREATE TABLE IF NOT EXISTS phases (
  run_id TEXT NOT NULL REFERENCES runs(id), idx INTEGER NOT NULL, name TEXT NOT NULL, state TEXT NOT NULL,
  error TEXT NOT NULL DEFAULT '', started_ms INTEGER NOT NULL DEFAULT 0, ended_ms INTEGER NOT NULL DEFAULT 0,
  detail_json TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (run_id, idx));
CREATE TABLE IF NOT EXISTS results (
  id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, phase_idx INTEGER, agent_id TEXT NOT NULL,
  warmup INTEGER NOT NULL, result_json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS results_run ON results(run_id);
CREATE TABLE IF NOT EXISTS samples (
  id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, agent_id TEXT NOT NULL, time_ms INTEGER NOT NULL, sample_json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS samples_run ON samples(run_id);
`;

type Row = Record<string, unknown>;

/** One line naming the path, what is wrong and what to do: start-up failures print only this. */
function storeError(path: string, what: string, todo: string, cause?: unknown): CniBenchError {
  return new CniBenchError(ErrorCodes.VALIDATION, `dbPath: '${path}': ${what}; ${todo}`, {
    cause,
    details: { field: 'dbPath', path },
  });
}

/**
 * Creates the missing directories above `path` one level at a time. (Node's
 * recursive mkdir loops for ever under /proc, where mkdir answers ENOENT for a
 * directory whose parent exists; a walk of our own fails at once instead.)
 */
function makeParents(path: string): void {
  const missing: string[] = [];
  let dir = dirname(path);
  for (;;) {
    let st: Stats;
    try {
      st = statSync(dir);
    } catch {
      missing.unshift(dir);
      const up = dirname(dir);
      if (up === dir || missing.length > 64)
        throw storeError(path, 'no existing directory above it', 'create its directory first');
      dir = up;
      continue;
    }
    if (!st.isDirectory())
      throw storeError(path, `'${dir}' is not a directory`, 'point --db at a path inside a directory');
    break;
  }
  for (const d of missing) {
    try {
      mkdirSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw storeError(
        path,
        `cannot create directory '${d}' (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
        'create it or choose a writable location',
        err,
      );
    }
  }
}

function runFromRow(r: Row): RunRecord {
  return {
    id: String(r.id),
    state: r.state as RunState,
    reason: String(r.reason),
    createdMs: Number(r.created_ms),
    startedMs: Number(r.started_ms),
    endedMs: Number(r.ended_ms),
    scenario: JSON.parse(String(r.scenario_json)),
    cluster: JSON.parse(String(r.cluster_json)),
  };
}

export class Store {
  private readonly db: DatabaseSync;

  /** `path` ':memory:' keeps nothing on disk. */
  constructor(path: string) {
    if (path !== ':memory:') makeParents(path);
    try {
      this.db = new DatabaseSync(path);
    } catch (err) {
      throw storeError(path, `cannot open it (${(err as Error).message})`, 'point --db at a writable file', err);
    }
    try {
      this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;');
      this.db.exec(SCHEMA);
      const check = this.db.prepare('PRAGMA quick_check').get() as Row | undefined;
      if (check && Object.values(check)[0] !== 'ok')
        throw new Error(`quick_check: ${String(Object.values(check)[0]).slice(0, 200)}`);
    } catch (err) {
      this.db.close();
      throw storeError(
        path,
        `not a usable cni-bench database (${(err as Error).message})`,
        'move the file aside or point --db at a new path',
        err,
      );
    }
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  insertRun(run: RunRecord): void {
    this.db
      .prepare(
        'INSERT INTO runs (id, state, reason, created_ms, started_ms, ended_ms, scenario_json, cluster_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        run.id,
        run.state,
        run.reason,
        run.createdMs,
        run.startedMs,
        run.endedMs,
        JSON.stringify(run.scenario),
        JSON.stringify(run.cluster),
      );
  }

  updateRun(
    id: string,
    patch: Partial<Pick<RunRecord, 'state' | 'reason' | 'startedMs' | 'endedMs' | 'cluster'>>,
  ): void {
    const cur = this.getRun(id);
    if (!cur) return;
    const next = { ...cur, ...patch };
    this.db
      .prepare('UPDATE runs SET state = ?, reason = ?, started_ms = ?, ended_ms = ?, cluster_json = ? WHERE id = ?')
      .run(next.state, next.reason, next.startedMs, next.endedMs, JSON.stringify(next.cluster), id);
  }

  getRun(id: string): RunRecord | undefined {
    const r = this.db.prepare('SELECT * FROM runs WHERE id = ?').get(id) as Row | undefined;
    return r ? runFromRow(r) : undefined;
  }

  /** Newest first; `before` (a page token's position) continues after the last run of the previous page. */
  listRuns(limit: number, before?: { createdMs: number; id: string }): RunRecord[] {
    const rows = before
      ? this.db
          .prepare(
            'SELECT * FROM runs WHERE created_ms < ? OR (created_ms = ? AND id < ?) ORDER BY created_ms DESC, id DESC LIMIT ?',
          )
          .all(before.createdMs, before.createdMs, before.id, limit)
      : this.db.prepare('SELECT * FROM runs ORDER BY created_ms DESC, id DESC LIMIT ?').all(limit);
    return (rows as Row[]).map(runFromRow);
  }

  /**
   * Marks every run that was pending or running as interrupted. Called at
   * start-up: a run cannot survive its collector, and must never look alive.
   */
  interruptUnfinished(reason: string, now = Date.now()): number {
    const r = this.db
      .prepare("UPDATE runs SET state = 'interrupted', reason = ?, ended_ms = ? WHERE state IN ('pending', 'running')")
      .run(reason, now);
    this.db
      .prepare("UPDATE phases SET state = 'interrupted', error = ?, ended_ms = ? WHERE state IN ('pending', 'running')")
      .run(reason, now);
    return Number(r.changes);
  }

  upsertPhase(p: PhaseRecord): void {
    this.db
      .prepare(
        `INSERT INTO phases (run_id, idx, name, state, error, started_ms, ended_ms, detail_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(run_id, idx) DO UPDATE SET name = excluded.name, state = excluded.state, error = excluded.error,
         started_ms = excluded.started_ms, ended_ms = excluded.ended_ms, detail_json = excluded.detail_json`,
      )
      .run(p.runId, p.index, p.name, p.state, p.error, p.startedMs, p.endedMs, JSON.stringify(p.detail));
  }

  phases(runId: string): PhaseRecord[] {
    return (this.db.prepare('SELECT * FROM phases WHERE run_id = ? ORDER BY idx').all(runId) as Row[]).map((r) => ({
      runId: String(r.run_id),
      index: Number(r.idx),
      name: String(r.name),
      state: r.state as PhaseRecord['state'],
      error: String(r.error),
      startedMs: Number(r.started_ms),
      endedMs: Number(r.ended_ms),
      detail: JSON.parse(String(r.detail_json)),
    }));
  }

  addResult(r: ResultRecord): void {
    this.db
      .prepare('INSERT INTO results (run_id, phase_idx, agent_id, warmup, result_json) VALUES (?, ?, ?, ?, ?)')
      .run(r.runId, r.phaseIndex, r.agentId, r.warmup ? 1 : 0, JSON.stringify(r.result));
  }

  results(runId: string): ResultRecord[] {
    return (this.db.prepare('SELECT * FROM results WHERE run_id = ? ORDER BY id').all(runId) as Row[]).map((r) => ({
      runId: String(r.run_id),
      phaseIndex: r.phase_idx === null ? null : Number(r.phase_idx),
      agentId: String(r.agent_id),
      warmup: Number(r.warmup) === 1,
      result: JSON.parse(String(r.result_json)) as JobResult,
    }));
  }

  addSample(s: SampleRecord): void {
    this.db
      .prepare('INSERT INTO samples (run_id, agent_id, time_ms, sample_json) VALUES (?, ?, ?, ?)')
      .run(s.runId, s.agentId, s.sample.timeMs, JSON.stringify(s.sample));
  }

  samples(runId: string): SampleRecord[] {
    return (this.db.prepare('SELECT * FROM samples WHERE run_id = ? ORDER BY time_ms, id').all(runId) as Row[]).map(
      (r) => ({
        runId: String(r.run_id),
        agentId: String(r.agent_id),
        sample: JSON.parse(String(r.sample_json)) as DataplaneSample,
      }),
    );
  }
}
