/**
 * CPU, memory and threads of the node's dataplane agents (kube-proxy, cilium,
 * calico, flannel), read straight from /proc: no `ps`, so no child process and
 * no output format to depend on. Parsing is in ./proc.ts; this file only finds
 * the processes, reads their files and keeps the previous snapshot for rates.
 * Finding them means reading every pid's comm (about 8 millicores at 1 Hz on a
 * node with a few hundred processes), so the full scan runs every `rescanMs`
 * or as soon as a known pid is gone; samples in between read only the pids
 * already found.
 */
import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { asCniBenchError, validationError } from '../../core/errors.js';
import {
  cpuMillicores,
  type ProcStat,
  parseProcStat,
  parseProcStatus,
  parseProcUptime,
  ticksToMillicores,
} from './proc.js';

export const DEFAULT_PROCESS_NAMES: readonly string[] = Object.freeze([
  'kube-proxy',
  'cilium-agent',
  'calico-node',
  'flanneld',
]);

/** The kernel keeps 15 characters of a task's name (TASK_COMM_LEN 16 with the NUL). */
const COMM_LEN = 15;
/** Open files at most this many at once, so a node with thousands of pids does not hit EMFILE. */
const READ_CONCURRENCY = 64;

export interface ProcessSamplerOptions {
  names?: readonly string[];
  /** Where /proc is; tests point this at a directory laid out like it. */
  procRoot?: string;
  /** USER_HZ, the unit of utime/stime (`getconf CLK_TCK`; 100 on Linux). */
  ticksPerSecond?: number;
  /** Scan every pid for the watched names at most this often (default 30 s); 0 scans on every sample. */
  rescanMs?: number;
  /**
   * Count only processes in this network namespace (the node's): in a lab,
   * every node's cilium-agent runs on one kernel and each node counts its own.
   * A process whose namespace cannot be read is counted.
   */
  netns?: string;
}

export interface ProcessUsage {
  name: string;
  pids: number[];
  /** Summed over `pids` since the previous sample; undefined on the first. */
  cpuMillicores: number | undefined;
  rssBytes: number;
  threads: number;
}

export interface ProcessSample {
  timeMs: number;
  /** Wall time since the previous sample; undefined on the first. */
  intervalMs: number | undefined;
  processes: ProcessUsage[];
  /** Reads that failed for a reason other than the process having exited, each naming its path. */
  errors: string[];
}

interface Snapshot {
  atMs: number;
  /** Ticks since boot when the sample began, to tell whether a new pid started within the interval. */
  uptimeTicks: number | undefined;
  stats: Map<number, ProcStat>;
}

interface Found {
  name: string;
  comm: string;
  stat: ProcStat;
  rssBytes: number;
  threads: number;
}

export class ProcessSampler {
  private readonly byComm: Map<string, string>;
  private readonly names: readonly string[];
  private readonly procRoot: string;
  private readonly ticksPerSecond: number;
  private readonly rescanMs: number;
  private prev: Snapshot | undefined;
  /** Pids found by the last full scan, with their comm. */
  private known = new Map<string, string>();
  private lastScanMs = -Infinity;
  private readonly netnsPath: string | undefined;
  private netnsWant: Promise<string | undefined> | undefined;

  constructor(options: ProcessSamplerOptions = {}) {
    this.names = [...(options.names ?? DEFAULT_PROCESS_NAMES)];
    this.procRoot = options.procRoot ?? '/proc';
    this.ticksPerSecond = options.ticksPerSecond ?? 100;
    this.rescanMs = options.rescanMs ?? 30_000;
    this.netnsPath = options.netns || undefined;
    this.byComm = new Map(this.names.map((n) => [n.slice(0, COMM_LEN), n]));
    if (this.byComm.size !== this.names.length) {
      throw validationError(
        [
          {
            path: 'names',
            message: `names must differ in their first ${COMM_LEN} characters: ${this.names.join(', ')}`,
          },
        ],
        'process sampler options',
      );
    }
  }

  async sample(): Promise<ProcessSample> {
    const errors: string[] = [];
    const atMs = performance.now();
    const timeMs = Date.now();
    const uptimeText = await this.read('uptime', errors);
    const uptimeTicks =
      uptimeText === undefined
        ? undefined
        : this.parse('uptime', errors, () => Math.floor(parseProcUptime(uptimeText) * this.ticksPerSecond));
    const found = await this.find(atMs, errors);
    const prev = this.prev;
    this.prev = { atMs, uptimeTicks, stats: new Map(found.map((f) => [f.stat.pid, f.stat])) };
    const intervalMs = prev === undefined ? undefined : atMs - prev.atMs;
    const processes = this.names.map((name) => {
      const mine = found.filter((f) => f.name === name).sort((a, b) => a.stat.pid - b.stat.pid);
      return {
        name,
        pids: mine.map((f) => f.stat.pid),
        cpuMillicores: prev === undefined || intervalMs === undefined ? undefined : this.rate(prev, mine, intervalMs),
        rssBytes: mine.reduce((s, f) => s + f.rssBytes, 0),
        threads: mine.reduce((s, f) => s + f.threads, 0),
      };
    });
    return { timeMs, intervalMs, processes, errors };
  }

  /**
   * Cumulative user and system seconds of each watched name (summed over its
   * pids), for windows two reads bracket; it leaves the rate of `sample()` alone.
   */
  async cpuTimes(): Promise<{
    processes: { name: string; userSeconds: number; systemSeconds: number; pids: number[] }[];
    errors: string[];
  }> {
    const errors: string[] = [];
    const found = await this.find(performance.now(), errors);
    const processes = this.names.map((name) => {
      const mine = found.filter((f) => f.name === name).sort((a, b) => a.stat.pid - b.stat.pid);
      return {
        name,
        userSeconds: mine.reduce((n, f) => n + f.stat.utimeTicks, 0) / this.ticksPerSecond,
        systemSeconds: mine.reduce((n, f) => n + f.stat.stimeTicks, 0) / this.ticksPerSecond,
        pids: mine.map((f) => f.stat.pid),
      };
    });
    return { processes, errors };
  }

  /** The watched processes: the known pids when none has gone and no scan is due, else a full scan. */
  private async find(atMs: number, errors: string[]): Promise<Found[]> {
    if (atMs - this.lastScanMs < this.rescanMs) {
      const again = await mapLimit([...this.known], READ_CONCURRENCY, ([pid, comm]) =>
        this.readProcess(pid, errors, comm),
      );
      if (again.every((f) => f !== undefined)) return again;
    }
    let pids: string[] = [];
    try {
      pids = (await readdir(this.procRoot)).filter((d) => /^\d+$/.test(d));
    } catch (err) {
      errors.push(`${this.procRoot}: ${asCniBenchError(err).message}`);
    }
    const found = (await mapLimit(pids, READ_CONCURRENCY, (pid) => this.readProcess(pid, errors))).filter(
      (f) => f !== undefined,
    );
    this.known = new Map(found.map((f) => [String(f.stat.pid), f.comm]));
    this.lastScanMs = atMs;
    return found;
  }

  /**
   * A pid seen last time counts its tick delta; a pid that started after the
   * previous sample began counts all its ticks; any other new pid (one whose
   * name changed to a watched one) is left out, as its ticks span an unknown time.
   */
  private rate(prev: Snapshot, mine: Found[], intervalMs: number): number {
    let total = 0;
    for (const { stat } of mine) {
      const before = prev.stats.get(stat.pid);
      if (before !== undefined && before.startTimeTicks === stat.startTimeTicks) {
        total += cpuMillicores(before, stat, intervalMs, this.ticksPerSecond);
      } else if (prev.uptimeTicks !== undefined && stat.startTimeTicks >= prev.uptimeTicks) {
        total += ticksToMillicores(stat.utimeTicks + stat.stimeTicks, intervalMs, this.ticksPerSecond);
      }
    }
    return total;
  }

  /** comm first (cheap, one short read per pid) unless known; stat and status only for watched names. */
  private async readProcess(pid: string, errors: string[], knownComm?: string): Promise<Found | undefined> {
    const comm = knownComm ?? (await this.read(join(pid, 'comm'), errors))?.replace(/\n$/, '');
    const name = comm === undefined ? undefined : this.byComm.get(comm);
    if (name === undefined || !(await this.inNetns(pid))) return undefined;
    const [statText, statusText] = await Promise.all([
      this.read(join(pid, 'stat'), errors),
      this.read(join(pid, 'status'), errors),
    ]);
    if (statText === undefined || statusText === undefined) return undefined;
    const stat = this.parse(join(pid, 'stat'), errors, () => parseProcStat(statText));
    const status = this.parse(join(pid, 'status'), errors, () => parseProcStatus(statusText));
    // A different comm in stat means the pid was reused between the reads.
    if (stat === undefined || status === undefined || stat.comm !== comm) return undefined;
    return { name, comm, stat, rssBytes: status.vmRssBytes, threads: status.threads };
  }

  /** True unless a netns filter is set and the pid is readably in another namespace. */
  private async inNetns(pid: string): Promise<boolean> {
    if (!this.netnsPath) return true;
    const path = this.netnsPath;
    this.netnsWant ??= stat(path).then(
      (s) => `net:[${s.ino}]`,
      () => undefined,
    );
    const want = await this.netnsWant;
    if (want === undefined) return true;
    const have = await readlink(join(this.procRoot, pid, 'ns/net')).catch(() => undefined);
    return have === undefined || have === want;
  }

  /** The file's text; undefined if the process has exited (ENOENT, ESRCH) or the read failed (then named in `errors`). */
  private async read(rel: string, errors: string[]): Promise<string | undefined> {
    const path = join(this.procRoot, rel);
    try {
      return await readFile(path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ESRCH') errors.push(`${path}: ${code ?? asCniBenchError(err).message}`);
      return undefined;
    }
  }

  private parse<T>(rel: string, errors: string[], fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      errors.push(`${join(this.procRoot, rel)}: ${asCniBenchError(err).message}`);
      return undefined;
    }
  }
}

export interface PhaseCpu {
  name: string;
  /** Samples that carried a CPU rate (the first sample of a sampler has none). */
  samples: number;
  /** Time-weighted: total CPU over total wall time, so uneven intervals do not skew it. */
  avgMillicores: number | undefined;
  maxMillicores: number | undefined;
  maxRssBytes: number;
}

/**
 * Folds the samples taken during one benchmark phase into per-name figures.
 * Sample once at the phase's start so its first interval does not reach back
 * into the previous phase.
 */
export class PhaseCpuSummary {
  private readonly acc = new Map<
    string,
    { weighted: number; wallMs: number; samples: number; max: number | undefined; maxRss: number }
  >();

  add(sample: ProcessSample): void {
    for (const p of sample.processes) {
      const a = this.acc.get(p.name) ?? { weighted: 0, wallMs: 0, samples: 0, max: undefined, maxRss: 0 };
      a.maxRss = Math.max(a.maxRss, p.rssBytes);
      if (p.cpuMillicores !== undefined && sample.intervalMs !== undefined) {
        a.weighted += p.cpuMillicores * sample.intervalMs;
        a.wallMs += sample.intervalMs;
        a.samples += 1;
        a.max = Math.max(a.max ?? 0, p.cpuMillicores);
      }
      this.acc.set(p.name, a);
    }
  }

  result(): PhaseCpu[] {
    return [...this.acc].map(([name, a]) => ({
      name,
      samples: a.samples,
      avgMillicores: a.wallMs > 0 ? a.weighted / a.wallMs : undefined,
      maxMillicores: a.max,
      maxRssBytes: a.maxRss,
    }));
  }
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
