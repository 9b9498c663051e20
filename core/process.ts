/**
 * The only module that starts child processes. Everything else hands it an
 * executable and an argument array (never a shell string). It owns timeouts,
 * cancellation through AbortSignal, stderr capture, process-group kill (so a
 * tool's own children die with it) and the mapping of exit codes to coded errors.
 */
import { execa, type ResultPromise } from 'execa';
import { CniBenchError, ErrorCodes } from './errors.js';

export interface RunOptions {
  /** Kill the process group after this long and fail with E_TIMEOUT. */
  timeoutMs?: number;
  /** Abort kills the process group and fails with E_CANCELLED. */
  signal?: AbortSignal;
  /** Written to stdin. */
  input?: string;
  /** Keep stdin as an open pipe (long-running only): the child sees EOF when this process ends. */
  stdin?: 'pipe';
  /** Exit codes that are not failures (default: only 0). */
  okExitCodes?: readonly number[];
  /** Name used in errors (default: the executable). */
  tool?: string;
  env?: Record<string, string>;
  /** Called with the child's pid once it started (run() only: observers of a running tool). */
  onSpawn?: (pid: number) => void;
  /** Largest stdout/stderr kept, in bytes (default 64 MiB); more is an error, never a silent cut. */
  maxBuffer?: number;
}

export interface RunResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  durationMs: number;
}

const KILL_GRACE_MS = 2000;
const MAX_BUFFER = 64 * 1024 * 1024;
const live = new Set<ResultPromise>();

function killGroup(child: ResultPromise, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** Stops a child's whole process group: SIGTERM, then SIGKILL after a grace period. */
function terminate(child: ResultPromise): void {
  killGroup(child, 'SIGTERM');
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS);
  timer.unref();
  void child.finally(() => clearTimeout(timer)).catch(() => undefined);
}

function start(file: string, args: readonly string[], opts: RunOptions): ResultPromise {
  const child = execa(file, args, {
    reject: false,
    detached: true,
    cleanup: true,
    stripFinalNewline: false,
    maxBuffer: opts.maxBuffer ?? MAX_BUFFER,
    ...(opts.input !== undefined ? { input: opts.input } : { stdin: opts.stdin ?? ('ignore' as const) }),
    ...(opts.env ? { env: opts.env } : {}),
  });
  live.add(child);
  void child.finally(() => live.delete(child)).catch(() => undefined);
  return child;
}

function sample(text: string): string {
  const t = text.trim();
  return t.length > 300 ? `${t.slice(0, 300)}…` : t;
}

/**
 * Runs a command to completion. Fails with E_TOOL_MISSING when the executable is
 * absent, E_TIMEOUT, E_CANCELLED, or E_TOOL_FAILED (with a stderr sample) on a bad
 * exit code. The result keeps stdout for the caller's pure parser.
 */
export async function run(file: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const tool = opts.tool ?? file;
  if (opts.signal?.aborted)
    throw new CniBenchError(ErrorCodes.CANCELLED, `${tool}: cancelled before start`, { details: { tool } });
  const began = Date.now();
  const child = start(file, args, opts);
  let why: 'timeout' | 'cancel' | undefined;
  const onAbort = (): void => {
    why ??= 'cancel';
    terminate(child);
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (child.pid !== undefined) opts.onSpawn?.(child.pid);
  } catch (err) {
    // An observer that cannot start must not leave the tool running unwatched.
    opts.signal?.removeEventListener('abort', onAbort);
    terminate(child);
    await child.catch(() => undefined);
    throw err;
  }
  const timer = opts.timeoutMs
    ? setTimeout(() => {
        why ??= 'timeout';
        terminate(child);
      }, opts.timeoutMs)
    : undefined;
  try {
    const r = await child;
    const out: RunResult = {
      stdout: String(r.stdout ?? ''),
      stderr: String(r.stderr ?? ''),
      exitCode: r.exitCode ?? -1,
      durationMs: Date.now() - began,
    };
    if (why === 'timeout')
      throw new CniBenchError(ErrorCodes.TIMEOUT, `${tool}: timed out after ${opts.timeoutMs} ms`, {
        details: { tool },
      });
    if (why === 'cancel') throw new CniBenchError(ErrorCodes.CANCELLED, `${tool}: cancelled`, { details: { tool } });
    const code = (r as { code?: string }).code;
    if (code === 'ENOENT' || (/ENOENT/.test(String(r.message ?? '')) && r.exitCode === undefined)) {
      throw new CniBenchError(ErrorCodes.TOOL_MISSING, `${tool}: executable '${file}' not found on PATH`, {
        details: { tool, binary: file },
      });
    }
    const ok = opts.okExitCodes ?? [0];
    if (!ok.includes(out.exitCode)) {
      const detail = sample(out.stderr) || sample(out.stdout) || String(r.message ?? '');
      throw new CniBenchError(ErrorCodes.TOOL_FAILED, `${tool}: exited with ${r.signal ?? out.exitCode}: ${detail}`, {
        details: { tool, exitCode: out.exitCode, stderr: sample(out.stderr), stdout: out.stdout },
      });
    }
    return out;
  } finally {
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

export interface LongRunning {
  readonly pid: number | undefined;
  /** Settles when the process ends, for whatever reason. */
  readonly exited: Promise<RunResult>;
  /** Stops the process group and waits for it to end. */
  stop(): Promise<RunResult>;
}

/** Starts a server-like process that runs until stopped or until `signal` aborts. */
export function spawnLongRunning(
  file: string,
  args: readonly string[],
  opts: Omit<RunOptions, 'timeoutMs' | 'okExitCodes'> = {},
): LongRunning {
  const began = Date.now();
  const child = start(file, args, opts);
  const exited: Promise<RunResult> = child.then((r) => ({
    stdout: String(r.stdout ?? ''),
    stderr: String(r.stderr ?? ''),
    exitCode: r.exitCode ?? -1,
    durationMs: Date.now() - began,
  }));
  const stop = (): Promise<RunResult> => {
    terminate(child);
    return exited;
  };
  opts.signal?.addEventListener('abort', () => void stop(), { once: true });
  return { pid: child.pid, exited, stop };
}

/** Kills every child this process started (used on shutdown signals). */
export async function stopAllChildren(): Promise<void> {
  const all = [...live];
  for (const c of all) terminate(c);
  await Promise.allSettled(all);
}

/** Number of children still running; tests use it to prove nothing leaks. */
export function liveChildren(): number {
  return live.size;
}

/** Absolute path of `binary` on PATH, or undefined. */
export async function findOnPath(binary: string, pathEnv = process.env.PATH ?? ''): Promise<string | undefined> {
  const { access, constants } = await import('node:fs/promises');
  if (binary.includes('/'))
    return access(binary, constants.X_OK).then(
      () => binary,
      () => undefined,
    );
  for (const dir of pathEnv.split(':').filter(Boolean)) {
    const full = `${dir}/${binary}`;
    if (
      await access(full, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return full;
  }
  return undefined;
}
