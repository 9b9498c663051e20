/**
 * Waits, after a condition changed, until the enforcer has stopped working on
 * it, so the measurement under the condition does not share the node's CPUs
 * with the enforcer's reaction. Verification alone is not enough: it returns
 * as soon as the probes see the wanted state, and when nothing had to change
 * for the probes (the 0-policies step, where relabelling the pods is all that
 * happened) it returns at once while kube-router resyncs its chains and ipsets
 * or Cilium regenerates endpoints. (A suspect for the 0-policies drift
 * control; in the runs of 2026-12-06 both enforcers were already quiet when
 * asked, so the drift came from the run's single baseline; docs/conditions.md.)
 * Quiet is the
 * enforcer processes' CPU (utime + stime from /proc/<pid>/stat) below a share
 * of one core over a window.
 */
import { readFile } from 'node:fs/promises';
import { parseProcStat } from '../../agent/index.js';

export interface Quiet {
  /** From the start of the wait until quiet (0 when already quiet over the first window). */
  ms: number;
  /** The last window's CPU use of the enforcer processes together, in millicores. */
  millicores: number;
  /** false when the deadline passed first (the measurement then runs beside a busy enforcer, and the step says so). */
  quiet: boolean;
}

const TICKS_PER_SECOND = 100;

/** Pure: millicores used between two tick totals `ms` apart. */
export function millicoresBetween(ticksBefore: number, ticksAfter: number, ms: number): number {
  return ms > 0 ? ((ticksAfter - ticksBefore) * 1000 * 1000) / (TICKS_PER_SECOND * ms) : 0;
}

/**
 * Pure: a process's CPU ticks including its waited-for children's (cutime and
 * cstime, fields 16 and 17): kube-router's work is done by the iptables-restore
 * and ipset children it runs, Cilium's partly by clang.
 */
export function ticksWithChildren(stat: string): number {
  const s = parseProcStat(stat);
  const rest = stat
    .slice(stat.lastIndexOf(')') + 1)
    .trim()
    .split(/\s+/);
  const children = Number(rest[16 - 3]) + Number(rest[17 - 3]);
  return s.utimeTicks + s.stimeTicks + (Number.isFinite(children) ? children : 0);
}

async function ticks(pids: readonly number[]): Promise<number> {
  let sum = 0;
  for (const pid of pids) {
    try {
      sum += ticksWithChildren(await readFile(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      // a process that ended has no more CPU to spend
    }
  }
  return sum;
}

/**
 * Waits until the processes use less than `maxMillicoresEach` apiece over
 * `windowMs`, or `timeoutMs` passes. The default 50 m is about three times an
 * idle cilium-agent v1.20.2 here (16 m at load 20).
 */
export async function waitQuiet(
  pids: () => readonly number[],
  opts: { windowMs?: number; maxMillicoresEach?: number; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<Quiet> {
  const windowMs = opts.windowMs ?? 1000;
  const each = opts.maxMillicoresEach ?? 50;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const began = Date.now();
  let millicores = 0;
  while (!opts.signal?.aborted) {
    const p = pids();
    if (!p.length) return { ms: 0, millicores: 0, quiet: true };
    const t0 = Date.now();
    const before = await ticks(p);
    await new Promise((r) => setTimeout(r, windowMs));
    millicores = millicoresBetween(before, await ticks(p), Date.now() - t0);
    if (millicores < each * p.length) return { ms: Date.now() - began - (Date.now() - t0), millicores, quiet: true };
    if (Date.now() - began >= timeoutMs) break;
  }
  return { ms: Date.now() - began, millicores, quiet: false };
}
