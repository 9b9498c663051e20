/**
 * Watches a load generator from the outside while it runs and gathers the
 * evidence behind the methodology guards (report/guards.ts): the CPU of its
 * process tree, the TIME_WAIT peak and TCP counters of its network namespace,
 * and the sysctls that bound short-connection load. Reading is done by
 * ./netns-reads.ts and agent/samplers/proc.ts; this file only schedules reads
 * and keeps the last good value of each.
 */
import { open, readFile, stat, type FileHandle } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { asCniBenchError } from '../../core/errors.js';
import type { ClientObservation } from '../../gen/cnibench/v1/agent.js';
import { parseProcStat } from '../samplers/proc.js';
import { processTree } from './process-tree.js';
import { readLinkSpeedMbps, readPortRange, readSnmpTcp, readSockstat, readTcpTwReuse, type NetnsTarget, type SnmpTcp } from './netns-reads.js';

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

export interface ClientObserver {
  /** Never rejects, even when the generator is long gone: what was seen before it exited is what counts. */
  stop(): Promise<ClientObserverResult>;
}

interface CpuReading {
  atMs: number;
  ticks: number;
}

const GONE = new Set(['ENOENT', 'ESRCH']);
const isGone = (err: unknown): boolean => GONE.has((err as NodeJS.ErrnoException)?.code ?? '');

/**
 * Starts polling at once (the first CPU reading is the baseline) and every
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
export function startClientObserver(opts: ClientObserverOptions): ClientObserver {
  const intervalMs = opts.intervalMs ?? 250;
  const tps = opts.ticksPerSecond ?? 100;
  const notes = new Set<string>();
  const note = (what: string, err: unknown): void => void notes.add(`${what}: ${asCniBenchError(err).message}`);
  const perProcess = new Map<string, number>();
  let rootStart: number | undefined;
  let rootGone = false;
  let first: CpuReading | undefined;
  let last: CpuReading | undefined;
  let twPeak = 0;
  let snmpFirst: SnmpTcp | undefined;
  let snmpLast: SnmpTcp | undefined;

  const readCpu = async (): Promise<void> => {
    const atMs = performance.now();
    const tree = await readTree(opts.pid, rootStart, note);
    if (tree === undefined) {
      rootGone = true;
      return;
    }
    rootStart = tree.rootStart;
    for (const [key, ticks] of tree.ticks) perProcess.set(key, Math.max(perProcess.get(key) ?? 0, ticks));
    let ticks = 0;
    for (const t of perProcess.values()) ticks += t;
    first ??= { atMs, ticks };
    last = { atMs, ticks };
  };
  const readNet = async (where: NetnsTarget, when: string): Promise<void> => {
    const [sock, snmp] = await Promise.allSettled([readSockstat(where), readSnmpTcp(where)]);
    if (sock.status === 'fulfilled') twPeak = Math.max(twPeak, sock.value.tcpTimeWait);
    else if (!isGone(sock.reason)) note(`sockstat (${when})`, sock.reason);
    if (snmp.status === 'fulfilled') {
      snmpFirst ??= snmp.value;
      snmpLast = snmp.value;
    } else if (!isGone(snmp.reason)) note(`snmp (${when})`, snmp.reason);
  };
  // Resolved once, while the pid still lives, so the namespace can be reached after it exits.
  const netns = netnsAccess(opts.pid, opts.netnsPath).catch((err: unknown) => {
    note('network namespace', err);
    return { target: undefined, pin: undefined, ino: undefined } as const;
  });
  // Under nsenter the pid starts in the agent's namespace and moves just before exec: its
  // /proc/<pid>/net counts only once it is in the target namespace.
  let entered = false;
  const inTarget = async (): Promise<boolean> => {
    if (entered) return true;
    const { ino } = await netns;
    entered = ino === undefined || (await stat(`/proc/${opts.pid}/ns/net`)).ino === ino;
    return entered;
  };
  const poll = async (): Promise<void> => {
    await readCpu();
    if (!rootGone && (await inTarget().catch(() => false))) await readNet({ pid: opts.pid }, 'while running');
  };

  const ac = new AbortController();
  const loop = (async () => {
    while (!ac.signal.aborted && !rootGone) {
      await poll().catch((err: unknown) => note('poll', err));
      await sleep(intervalMs, undefined, { signal: ac.signal }).catch(() => undefined);
    }
  })();
  const once = (async () => {
    const { target } = await netns;
    if (target === undefined) return { ports: 0, twReuse: false, linkMbps: 0 };
    const [ports, twReuse, link] = await Promise.allSettled([readPortRange(target.netnsPath), readTcpTwReuse(target.netnsPath), readLinkSpeedMbps({ ...target, ...(opts.targetHost ? { targetHost: opts.targetHost } : {}) })]);
    if (ports.status === 'rejected') note('ip_local_port_range', ports.reason);
    if (twReuse.status === 'rejected') note('tcp_tw_reuse', twReuse.reason);
    if (link.status === 'rejected') note('link speed', link.reason);
    else if (link.value.reason) notes.add(`link speed unknown: ${link.value.reason}`);
    return {
      ports: ports.status === 'fulfilled' ? ports.value : 0,
      twReuse: twReuse.status === 'fulfilled' && twReuse.value === 1,
      linkMbps: link.status === 'fulfilled' ? link.value.mbps : 0,
    };
  })();

  let result: Promise<ClientObserverResult> | undefined;
  const finish = async (): Promise<ClientObserverResult> => {
    ac.abort();
    await loop;
    if (!rootGone) await readCpu().catch((err: unknown) => note('cpu (at stop)', err));
    const { target, pin } = await netns;
    if (!snmpFirst) notes.add('snmp: no reading while the tool ran in its namespace, retransmits unknown');
    // After the tool's exit TIME_WAIT is often at its peak and the counters final; read its namespace once more.
    if (target !== undefined) await readNet(target, 'at stop');
    else notes.add('the namespace could not be read after the tool exited: counters are from the last poll');
    await pin?.close().catch(() => undefined);
    const fixed = await once;
    let cpuCores = 0;
    if (first && last && last.atMs > first.atMs) cpuCores = (last.ticks - first.ticks) / tps / ((last.atMs - first.atMs) / 1000);
    else notes.add(`cpu: fewer than two readings of pid ${opts.pid} (it exited within ${intervalMs} ms?)`);
    const delta = (k: 'retransSegs' | 'outSegs'): number => {
      if (!snmpFirst || !snmpLast) return 0;
      const d = snmpLast[k] - snmpFirst[k];
      if (d < 0) notes.add(`snmp ${k} went backwards by ${-d}`);
      return Math.max(0, d);
    };
    return {
      observation: {
        cpuCores,
        cpuCapacityCores: Math.max(0, Math.min(opts.threads, opts.cpus)),
        timeWaitPeak: twPeak,
        ephemeralPorts: fixed.ports,
        tcpTwReuse: fixed.twReuse,
        connectErrors: 0,
        linkSpeedMbps: fixed.linkMbps,
        tcpRetransSegs: delta('retransSegs'),
        tcpOutSegs: delta('outSegs'),
      },
      notes: [...notes],
    };
  };
  return {
    stop: () => (result ??= finish().catch((err: unknown) => {
      note('observer', err);
      return { observation: emptyObservation(opts), notes: [...notes] };
    })),
  };
}

/**
 * How to reach the generator's namespace once its pid is gone: the given
 * path; the agent's own when the pid shares it; else a file descriptor held
 * on /proc/<pid>/ns/net, which keeps that namespace reachable through
 * /proc/<agent>/fd/<n> after the pid exits.
 */
async function netnsAccess(pid: number, netnsPath: string | undefined): Promise<{ target: { netnsPath?: string } | undefined; pin: FileHandle | undefined; ino: number | undefined }> {
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
async function readTree(root: number, rootStart: number | undefined, note: (what: string, err: unknown) => void): Promise<{ rootStart: number; ticks: Map<string, number> } | undefined> {
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
  return { cpuCores: 0, cpuCapacityCores: cap, timeWaitPeak: 0, ephemeralPorts: 0, tcpTwReuse: false, connectErrors: 0, linkSpeedMbps: 0, tcpRetransSegs: 0, tcpOutSegs: 0 };
}
