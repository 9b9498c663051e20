/**
 * Watches a load generator from the outside while it runs and gathers the
 * evidence behind the methodology guards (report/guards.ts): the CPU of its
 * process tree, the TIME_WAIT peak and TCP counters of its network namespace,
 * and the sysctls that bound short-connection load. Reading is done by
 * ./netns-reads.ts and agent/samplers/proc.ts; this file only schedules reads
 * and keeps the last good value of each.
 */
import { type FileHandle, open, readFile, stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { asCniBenchError } from '../../core/errors.js';
import { sleep } from '../../core/sleep.js';
import type { ClientObservation } from '../../gen/cnibench/v1/agent.js';
import { parseProcStat } from '../samplers/proc.js';
import {
  type NetnsTarget,
  readLinkSpeedMbps,
  readPortRange,
  readSnmpTcp,
  readSockstat,
  readTcpTwReuse,
  type SnmpTcp,
} from './netns-reads.js';
import { processTree } from './process-tree.js';

export interface ClientObserverOptions {
  /** The load generator's pid (after any nsenter exec, the tool itself). */
  pid: number;
  /** Threads the generator was told to use; with `cpus` it bounds the cores it can use. */
  threads: number;
  /** CPUs the agent may give its load generators. */
  cpus: number;
  /** The generator's network namespace when it is not the agent's (nsenter --net=...). */
  netnsPath?: string;
  /** The address the generator targets, to find the route's link (else the default route). */
  targetHost?: string;
  intervalMs?: number;
  /** USER_HZ, the unit of utime/stime. */
  ticksPerSecond?: number;
}

export interface ClientObserverResult {
  observation: ClientObservation;
  /** What could not be read, and so left at its last good value or 0. */
  notes: string[];
}

interface CpuReading {
  atMs: number;
  ticks: number;
}

const GONE = new Set(['ENOENT', 'ESRCH']);
const isGone = (err: unknown): boolean => GONE.has((err as NodeJS.ErrnoException)?.code ?? '');

/**
 * Watches one load generator: starts polling at once (the first CPU reading is the baseline) and every
 * `intervalMs` (default 250) until the generator's pid is gone or stop() is
 * called. CPU is utime+stime of the pid and its descendants (found by
 * ./process-tree.ts through /proc/<pid>/task/<tid>/children), each process's last seen total kept, so a
 * child that exits between polls still counts up to when it was last seen;
 * cpuCores is the ticks between the first and the last reading over the wall
 * time between them, so polling past the tool's exit does not dilute it.
 *
 * connectErrors is always 0 here: the kernel counts no EADDRNOTAVAIL (a
 * connect() that finds no free port sends nothing, so neither AttemptFails
 * nor any TcpExt counter moves; see test/fixtures/observe/). The caller may
 * fill it from the tool's own count when it knows the cause.
 */
export class ClientObserver {
  private readonly intervalMs: number;
  private readonly notes = new Set<string>();
  private readonly cpu = new CpuTally();
  private readonly net = new NetTally();
  private readonly ac = new AbortController();
  /** Resolved once, while the pid still lives, so the namespace can be reached after it exits. */
  private readonly netns: Promise<NetnsAccess>;
  private readonly loop: Promise<void>;
  private readonly fixed: Promise<FixedReads>;
  /** Under nsenter the pid starts in the agent's namespace and moves just before exec: its /proc/<pid>/net counts only once it is in the target namespace. */
  private entered = false;
  private result: Promise<ClientObserverResult> | undefined;

  constructor(private readonly opts: ClientObserverOptions) {
    this.intervalMs = opts.intervalMs ?? 250;
    this.netns = netnsAccess(opts.pid, opts.netnsPath).catch((err: unknown) => {
      this.note('network namespace', err);
      return { target: undefined, pin: undefined, ino: undefined };
    });
    this.loop = this.run();
    this.fixed = this.readFixed();
  }

  /** Never rejects, even when the generator is long gone: what was seen before it exited is what counts. */
  stop(): Promise<ClientObserverResult> {
    this.result ??= this.finish().catch((err: unknown) => {
      this.note('observer', err);
      return { observation: emptyObservation(this.opts), notes: [...this.notes] };
    });
    return this.result;
  }

  private readonly note = (what: string, err: unknown): void =>
    void this.notes.add(`${what}: ${asCniBenchError(err).message}`);

  private async run(): Promise<void> {
    while (!this.ac.signal.aborted && !this.cpu.rootGone) {
      await this.poll().catch((err: unknown) => this.note('poll', err));
      await sleep(this.intervalMs, this.ac.signal);
    }
  }

  private async poll(): Promise<void> {
    await this.cpu.read(this.opts.pid, this.note);
    if (!this.cpu.rootGone && (await this.inTarget().catch(() => false)))
      await this.net.read({ pid: this.opts.pid }, 'while running', this.note);
  }

  private async inTarget(): Promise<boolean> {
    if (this.entered) return true;
    const { ino } = await this.netns;
    this.entered = ino === undefined || (await stat(`/proc/${this.opts.pid}/ns/net`)).ino === ino;
    return this.entered;
  }

  private async readFixed(): Promise<FixedReads> {
    const { target } = await this.netns;
    if (target === undefined) return { ports: 0, twReuse: false, linkMbps: 0 };
    const host = this.opts.targetHost ? { targetHost: this.opts.targetHost } : {};
    const [ports, twReuse, link] = await Promise.allSettled([
      readPortRange(target.netnsPath),
      readTcpTwReuse(target.netnsPath),
      readLinkSpeedMbps({ ...target, ...host }),
    ]);
    if (ports.status === 'rejected') this.note('ip_local_port_range', ports.reason);
    if (twReuse.status === 'rejected') this.note('tcp_tw_reuse', twReuse.reason);
    if (link.status === 'rejected') this.note('link speed', link.reason);
    else if (link.value.reason) this.notes.add(`link speed unknown: ${link.value.reason}`);
    return {
      ports: ports.status === 'fulfilled' ? ports.value : 0,
      twReuse: twReuse.status === 'fulfilled' && twReuse.value === 1,
      linkMbps: link.status === 'fulfilled' ? link.value.mbps : 0,
    };
  }

  private async finish(): Promise<ClientObserverResult> {
    this.ac.abort();
    await this.loop;
    if (!this.cpu.rootGone)
      await this.cpu.read(this.opts.pid, this.note).catch((err: unknown) => this.note('cpu (at stop)', err));
    const { target, pin } = await this.netns;
    if (!this.net.first) this.notes.add('snmp: no reading while the tool ran in its namespace, retransmits unknown');
    // After the tool's exit TIME_WAIT is often at its peak and the counters final; read its namespace once more.
    if (target !== undefined) await this.net.read(target, 'at stop', this.note);
    else this.notes.add('the namespace could not be read after the tool exited: counters are from the last poll');
    await pin?.close().catch(() => undefined);
    const fixed = await this.fixed;
    const cpuCores = this.cpu.cores(this.opts.ticksPerSecond ?? 100);
    if (cpuCores === undefined)
      this.notes.add(`cpu: fewer than two readings of pid ${this.opts.pid} (it exited within ${this.intervalMs} ms?)`);
    return {
      observation: {
        ...emptyObservation(this.opts),
        cpuCores: cpuCores ?? 0,
        timeWaitPeak: this.net.twPeak,
        ephemeralPorts: fixed.ports,
        tcpTwReuse: fixed.twReuse,
        linkSpeedMbps: fixed.linkMbps,
        tcpRetransSegs: this.net.delta('retransSegs', this.notes),
        tcpOutSegs: this.net.delta('outSegs', this.notes),
      },
      notes: [...this.notes],
    };
  }
}

/** Starts observing a load generator (see ClientObserver). */
export function startClientObserver(opts: ClientObserverOptions): ClientObserver {
  return new ClientObserver(opts);
}

type Note = (what: string, err: unknown) => void;

interface FixedReads {
  ports: number;
  twReuse: boolean;
  linkMbps: number;
}

interface NetnsAccess {
  target: { netnsPath?: string } | undefined;
  pin: FileHandle | undefined;
  ino: number | undefined;
}

/** utime+stime of a process tree: each process's last seen total kept, the first and the last reading. */
class CpuTally {
  private readonly perProcess = new Map<string, number>();
  private rootStart: number | undefined;
  rootGone = false;
  private first: CpuReading | undefined;
  private last: CpuReading | undefined;

  async read(pid: number, note: Note): Promise<void> {
    const atMs = performance.now();
    const tree = await readTree(pid, this.rootStart, note);
    if (tree === undefined) {
      this.rootGone = true;
      return;
    }
    this.rootStart = tree.rootStart;
    for (const [key, ticks] of tree.ticks) this.perProcess.set(key, Math.max(this.perProcess.get(key) ?? 0, ticks));
    let ticks = 0;
    for (const t of this.perProcess.values()) ticks += t;
    this.first ??= { atMs, ticks };
    this.last = { atMs, ticks };
  }

  /** Cores used between the first and the last reading; undefined with fewer than two. */
  cores(ticksPerSecond: number): number | undefined {
    const { first, last } = this;
    if (!first || !last || last.atMs <= first.atMs) return undefined;
    return (last.ticks - first.ticks) / ticksPerSecond / ((last.atMs - first.atMs) / 1000);
  }
}

/** The TIME_WAIT peak and the first and last TCP counters of a network namespace. */
class NetTally {
  twPeak = 0;
  first: SnmpTcp | undefined;
  private last: SnmpTcp | undefined;

  async read(where: NetnsTarget, when: string, note: Note): Promise<void> {
    const [sock, snmp] = await Promise.allSettled([readSockstat(where), readSnmpTcp(where)]);
    if (sock.status === 'fulfilled') this.twPeak = Math.max(this.twPeak, sock.value.tcpTimeWait);
    else if (!isGone(sock.reason)) note(`sockstat (${when})`, sock.reason);
    if (snmp.status === 'fulfilled') {
      this.first ??= snmp.value;
      this.last = snmp.value;
    } else if (!isGone(snmp.reason)) note(`snmp (${when})`, snmp.reason);
  }

  delta(k: 'retransSegs' | 'outSegs', notes: Set<string>): number {
    if (!this.first || !this.last) return 0;
    const d = this.last[k] - this.first[k];
    if (d < 0) notes.add(`snmp ${k} went backwards by ${-d}`);
    return Math.max(0, d);
  }
}

/**
 * How to reach the generator's namespace once its pid is gone: the given
 * path; the agent's own when the pid shares it; else a file descriptor held
 * on /proc/<pid>/ns/net, which keeps that namespace reachable through
 * /proc/<agent>/fd/<n> after the pid exits.
 */
async function netnsAccess(pid: number, netnsPath: string | undefined): Promise<NetnsAccess> {
  if (netnsPath) return { target: { netnsPath }, pin: undefined, ino: (await stat(netnsPath)).ino };
  const [own, theirs] = await Promise.all([stat('/proc/self/ns/net'), stat(`/proc/${pid}/ns/net`)]);
  if (own.ino === theirs.ino) return { target: {}, pin: undefined, ino: own.ino };
  const pin = await open(`/proc/${pid}/ns/net`, 'r');
  return { target: { netnsPath: `/proc/${process.pid}/fd/${pin.fd}` }, pin, ino: theirs.ino };
}

/**
 * utime+stime of `root` and every descendant, keyed by pid and start time (so
 * a reused pid is another process); undefined once `root` has exited, become
 * a zombie, or been replaced by another process with its pid.
 */
async function readTree(
  root: number,
  rootStart: number | undefined,
  note: Note,
): Promise<{ rootStart: number; ticks: Map<string, number> } | undefined> {
  const ticks = new Map<string, number>();
  let start: number | undefined;
  for (const pid of await processTree(root)) {
    let text: string;
    try {
      text = await readFile(`/proc/${pid}/stat`, 'utf8');
    } catch (err) {
      if (!isGone(err)) note(`/proc/${pid}/stat`, err);
      if (pid === root) return undefined;
      continue;
    }
    const stat = parseProcStat(text);
    if (pid === root) {
      if (stat.state === 'Z' || (rootStart !== undefined && stat.startTimeTicks !== rootStart)) return undefined;
      start = stat.startTimeTicks;
    }
    ticks.set(`${pid}:${stat.startTimeTicks}`, stat.utimeTicks + stat.stimeTicks);
  }
  return start === undefined ? undefined : { rootStart: start, ticks };
}

function emptyObservation(opts: ClientObserverOptions): ClientObservation {
  const cap = Math.max(0, Math.min(opts.threads, opts.cpus));
  return {
    cpuCores: 0,
    cpuCapacityCores: cap,
    timeWaitPeak: 0,
    ephemeralPorts: 0,
    tcpTwReuse: false,
    connectErrors: 0,
    linkSpeedMbps: 0,
    tcpRetransSegs: 0,
    tcpOutSegs: 0,
  };
}
