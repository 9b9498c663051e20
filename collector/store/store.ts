/**
 * Durable state of the collector: runs, their phases, raw results and dataplane
 * samples, in SQLite (node:sqlite, no native add-on). Raw tool output is kept
 * with every result so any number in a report can be audited later.
 */
import { mkdirSync, type Stats, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
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

/** A write the store could not make (disk full, read-only, I/O error): one line naming the path and what to do. */
export function storeWriteError(path: string, err: unknown): CniBenchError {
  const why = (err as Error).message.split('\n')[0]?.slice(0, 200) ?? 'unknown error';
  return new CniBenchError(
    ErrorCodes.STORE,
    `store: cannot write '${path}' (${why}); free space on its filesystem or point --db at another location`,
    { cause: err, details: { field: 'dbPath', path } },
  );
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
  private insertSample: StatementSync | undefined;
  private insertResult: StatementSync | undefined;
  /**
   * Run states the disk refused (it was full): shown by getRun/listRuns from
   * memory so a run never looks alive after it ended, and written with the
   * next write that succeeds.
   */
  private readonly unsaved = new Map<string, RunRecord>();
  /** The last write failure's one-line message; cleared by a write that succeeds. */
  lastWriteError: string | undefined;
  /** Told of every write failure (the collector logs them, rate-limited). */
  onWriteError: ((message: string) => void) | undefined;

  /** `path` ':memory:' keeps nothing on disk. */
  constructor(readonly path: string) {
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

  /** Runs `fn` in one transaction: all of its writes commit together, or none (the error is rethrown). */
  transaction(fn: () => void): void {
    this.write(() => {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        fn();
        this.db.exec('COMMIT');
      } catch (err) {
        try {
          if (this.db.isTransaction) this.db.exec('ROLLBACK');
        } catch {
          // SQLite rolled back already (it does on SQLITE_FULL and I/O errors).
        }
        throw err;
      }
    });
  }

  /** Runs one write; a failure becomes E_STORE naming the path (and is remembered until a write succeeds). */
  private write<T>(fn: () => T): T {
    let out: T;
    try {
      out = fn();
    } catch (err) {
      if (err instanceof CniBenchError) throw err;
      const e = storeWriteError(this.path, err);
      this.lastWriteError = e.message;
      this.onWriteError?.(e.message);
      throw e;
    }
    this.lastWriteError = undefined;
    if (this.unsaved.size) this.saveUnsaved();
    return out;
  }

  /** Writes the run states the disk refused earlier; keeps them in memory while it still refuses. */
  private saveUnsaved(): void {
    for (const [id, run] of [...this.unsaved]) {
      try {
        this.db
          .prepare('UPDATE runs SET state = ?, reason = ?, started_ms = ?, ended_ms = ?, cluster_json = ? WHERE id = ?')
          .run(run.state, run.reason, run.startedMs, run.endedMs, JSON.stringify(run.cluster), id);
        this.unsaved.delete(id);
      } catch {
        return;
      }
    }
  }

  insertRun(run: RunRecord): void {
    this.write(() =>
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
        ),
    );
  }

  updateRun(
    id: string,
    patch: Partial<Pick<RunRecord, 'state' | 'reason' | 'startedMs' | 'endedMs' | 'cluster'>>,
  ): void {
    const cur = this.getRun(id);
    if (!cur) return;
    const next = { ...cur, ...patch };
    try {
      this.write(() =>
        this.db
          .prepare('UPDATE runs SET state = ?, reason = ?, started_ms = ?, ended_ms = ?, cluster_json = ? WHERE id = ?')
          .run(next.state, next.reason, next.startedMs, next.endedMs, JSON.stringify(next.cluster), id),
      );
      this.unsaved.delete(id);
    } catch (err) {
      this.unsaved.set(id, next);
      throw err;
    }
  }

  getRun(id: string): RunRecord | undefined {
    const unsaved = this.unsaved.get(id);
    if (unsaved) return unsaved;
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
    return (rows as Row[]).map((r) => this.unsaved.get(String(r.id)) ?? runFromRow(r));
  }

  /**
   * Marks every run that was pending or running as interrupted. Called at
   * start-up: a run cannot survive its collector, and must never look alive.
   */
  interruptUnfinished(reason: string, now = Date.now()): number {
    return this.write(() => {
      const r = this.db
        .prepare(
          "UPDATE runs SET state = 'interrupted', reason = ?, ended_ms = ? WHERE state IN ('pending', 'running')",
        )
        .run(reason, now);
      this.db
        .prepare(
          "UPDATE phases SET state = 'interrupted', error = ?, ended_ms = ? WHERE state IN ('pending', 'running')",
        )
        .run(reason, now);
      return Number(r.changes);
    });
  }

  upsertPhase(p: PhaseRecord): void {
    this.write(() =>
      this.db
        .prepare(
          `INSERT INTO phases (run_id, idx, name, state, error, started_ms, ended_ms, detail_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(run_id, idx) DO UPDATE SET name = excluded.name, state = excluded.state, error = excluded.error,
         started_ms = excluded.started_ms, ended_ms = excluded.ended_ms, detail_json = excluded.detail_json`,
        )
        .run(p.runId, p.index, p.name, p.state, p.error, p.startedMs, p.endedMs, JSON.stringify(p.detail)),
    );
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
    this.insertResult ??= this.db.prepare(
      'INSERT INTO results (run_id, phase_idx, agent_id, warmup, result_json) VALUES (?, ?, ?, ?, ?)',
    );
    this.insertResult.run(r.runId, r.phaseIndex, r.agentId, r.warmup ? 1 : 0, JSON.stringify(r.result));
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
    this.insertSample ??= this.db.prepare(
      'INSERT INTO samples (run_id, agent_id, time_ms, sample_json) VALUES (?, ?, ?, ?)',
    );
    this.insertSample.run(s.runId, s.agentId, s.sample.timeMs, JSON.stringify(s.sample));
  }

  /** How many samples run `runId` holds (without reading them). */
  sampleCount(runId: string): number {
    const r = this.db.prepare('SELECT count(*) AS n FROM samples WHERE run_id = ?').get(runId) as Row | undefined;
    return Number(r?.n ?? 0);
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
