/**
 * Pure parsers for the per-process files under /proc (proc(5)): `stat`,
 * `status` and `uptime`, and the CPU rate between two `stat` snapshots. They
 * read text only, so they are tested on captures in test/fixtures/proc/.
 */
import { type FieldIssue, parseError, validationError } from '../../core/errors.js';

export interface ProcStat {
  pid: number;
  comm: string;
  state: string;
  utimeTicks: number;
  stimeTicks: number;
  startTimeTicks: number;
  numThreads: number;
}

export interface ProcStatus {
  name: string;
  vmRssBytes: number;
  threads: number;
}

const STAT = '/proc/<pid>/stat';
const STATUS = '/proc/<pid>/status';
/** Fields every kernel since 2.6.24 prints (up to cguest_time); fewer means the line was cut. */
const MIN_STAT_FIELDS = 44;

/**
 * One line of /proc/<pid>/stat. `comm` may hold spaces and parentheses, so it
 * ends at the LAST ')'. A line shorter than the kernel ever writes is an error,
 * never a process with zero CPU.
 */
export function parseProcStat(text: string): ProcStat {
  const line = text.trim();
  const open = line.indexOf(' (');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) throw parseError(STAT, text, 'no "pid (comm)" prefix');
  const pidText = line.slice(0, open);
  if (!/^\d+$/.test(pidText)) throw parseError(STAT, text, 'pid is not a whole number');
  // rest[0] is field 3 (state), so field n of proc(5) is rest[n - 3].
  const rest = line
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  if (rest.length + 2 < MIN_STAT_FIELDS)
    throw parseError(STAT, text, `${rest.length + 2} fields, expected at least ${MIN_STAT_FIELDS} (truncated?)`);
  const state = rest[0] ?? '';
  if (!/^[A-Za-z]$/.test(state)) throw parseError(STAT, text, `state ${JSON.stringify(state)} is not one letter`);
  const field = (n: number, name: string): number => {
    const v = rest[n - 3] ?? '';
    if (!/^\d+$/.test(v))
      throw parseError(STAT, text, `${name} (field ${n}) ${JSON.stringify(v)} is not a whole number`);
    return Number(v);
  };
  return {
    pid: Number(pidText),
    comm: line.slice(open + 2, close),
    state,
    utimeTicks: field(14, 'utime'),
    stimeTicks: field(15, 'stime'),
    numThreads: field(20, 'num_threads'),
    startTimeTicks: field(22, 'starttime'),
  };
}

/**
 * /proc/<pid>/status. Only zombies and kernel threads (no VmSize: they have no
 * user address space) lack VmRSS; anywhere else a missing VmRSS means the text
 * is not what the kernel wrote, and is an error rather than 0 bytes.
 */
export function parseProcStatus(text: string): ProcStatus {
  const fields = new Map<string, string>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  const name = fields.get('Name');
  if (name === undefined) throw parseError(STATUS, text, 'no Name line');
  const threadsText = fields.get('Threads') ?? '';
  if (!/^\d+$/.test(threadsText)) throw parseError(STATUS, text, 'no Threads line with a whole number');
  const rss = fields.get('VmRSS');
  let vmRssBytes = 0;
  if (rss !== undefined) {
    const m = /^(\d+) kB$/.exec(rss);
    if (!m) throw parseError(STATUS, text, `VmRSS ${JSON.stringify(rss)} is not "<n> kB"`);
    vmRssBytes = Number(m[1]) * 1024;
  } else {
    const zombie = (fields.get('State') ?? '').startsWith('Z');
    const kernelThread = !fields.has('VmSize');
    if (!zombie && !kernelThread)
      throw parseError(STATUS, text, 'no VmRSS line, yet neither a zombie nor a kernel thread');
  }
  return { name, vmRssBytes, threads: Number(threadsText) };
}

/** Seconds since boot from /proc/uptime; starttime in stat counts from the same origin. */
export function parseProcUptime(text: string): number {
  const m = /^(\d+(?:\.\d+)?) \d+(?:\.\d+)?$/.exec(text.trim());
  if (!m) throw parseError('/proc/uptime', text, 'expected "<uptime> <idle>" in seconds');
  return Number(m[1]);
}

/**
 * CPU used between two stat snapshots of one process, in millicores (1000 =
 * one core busy). A different starttime means the pid now names another
 * process, whose ticks cannot be subtracted from the first one's.
 */
export function cpuMillicores(prev: ProcStat, cur: ProcStat, elapsedMs: number, ticksPerSecond = 100): number {
  const issues: FieldIssue[] = [];
  if (prev.pid !== cur.pid) issues.push({ path: 'cur.pid', message: `pid ${cur.pid} differs from ${prev.pid}` });
  else if (prev.startTimeTicks !== cur.startTimeTicks) {
    issues.push({
      path: 'cur.startTimeTicks',
      message: `pid ${cur.pid} was reused (start ${prev.startTimeTicks} → ${cur.startTimeTicks})`,
    });
  }
  if (!(elapsedMs > 0)) issues.push({ path: 'elapsedMs', message: `must be > 0, got ${elapsedMs}` });
  if (!(ticksPerSecond > 0)) issues.push({ path: 'ticksPerSecond', message: `must be > 0, got ${ticksPerSecond}` });
  const ticks = cur.utimeTicks + cur.stimeTicks - (prev.utimeTicks + prev.stimeTicks);
  if (ticks < 0) issues.push({ path: 'cur.utimeTicks', message: `CPU ticks went backwards by ${-ticks}` });
  if (issues.length > 0) throw validationError(issues, 'CPU snapshot pair');
  return ticksToMillicores(ticks, elapsedMs, ticksPerSecond);
}

/** `ticks` of CPU spent over `elapsedMs` of wall time, in millicores. */
export function ticksToMillicores(ticks: number, elapsedMs: number, ticksPerSecond = 100): number {
  return ((ticks * 1000) / ticksPerSecond / elapsedMs) * 1000;
}
