/**
 * What a row's work cost in CPU: for each measured round, the kernel's
 * system, irq and softirq time on the client's and the server's node (their
 * own CPUs in the lab) plus the user time of the dataplane processes
 * (kube-proxy, cilium-agent), from the round's two bracket samples, minus what
 * the same nodes spent per second while idle (the baseline: a window before
 * the run, pooled with the pauses between the phase's rounds),
 * divided by the work the round did: CPU-seconds per Gbit moved (numerically
 * the cores busy per Gbit/s) or per 1,000 requests or connections. Pure.
 *
 * The kernel samples those fields by its tick (CONFIG_TICK_CPU_ACCOUNTING
 * without IRQ_TIME_ACCOUNTING, as here) but measures idle exactly (nohz):
 * a CPU woken from idle by a packet, which runs the softirq and sleeps again
 * before the next tick, spends time counted nowhere. That time, the window's
 * elapsed time on the node's CPUs less every field, is `unsampled` and
 * belongs to the headline: with 20,000 iptables rules walked per packet on
 * the receiving CPU, that CPU was busy about 100 of 201.6 ticks and its
 * fields recorded 5 of them (test/fixtures/proc-stat/rps-rules-*).
 *
 * Not counted in the headline: user time on the nodes (the load generators'
 * own work, the same on every dataplane) and the agent (the measurement's own
 * cost, shown apart). The dataplane processes' system time is already in their
 * node's system ticks when they run on its CPUs, as in the lab.
 */
import type { DataplaneSample, JobResult, KernelCpu } from '../gen/cnibench/v1/agent.js';
import type { Metric } from './metrics-model.js';
import { summarise } from './stats.js';

/** CPU-seconds over a window, by where they went. */
export interface CpuSeconds {
  system: number;
  irq: number;
  softirq: number;
  /** Busy time no tick sampled (elapsed on the node's CPUs less every /proc/stat field); 0 when a sample has no read time. */
  unsampled: number;
  user: number;
  /** User time of the dataplane processes, summed over names. */
  dataplaneUser: number;
  agent: number;
}

export interface CpuWindow {
  seconds: number;
  cpu: CpuSeconds;
}

const KEYS: readonly (keyof CpuSeconds)[] = ['system', 'irq', 'softirq', 'unsampled', 'user', 'dataplaneUser', 'agent'];
const ALL_FIELDS = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal'] as const;

/**
 * CPU-seconds between two cumulative reads of one node, over the reads' own
 * times when both carry one (else `elapsedMs`, the samples'). Throws (with the
 * reason) when they cannot be subtracted: different CPUs, time going
 * backwards, or a dataplane process restarted in between (its pids changed).
 */
export function cpuWindow(before: KernelCpu, after: KernelCpu, elapsedMs: number): CpuWindow {
  if (before.cpus.join(',') !== after.cpus.join(','))
    throw new Error(`CPUs changed between samples (${before.cpus.join(',')} → ${after.cpus.join(',')})`);
  const timed = before.readAtMs > 0 && after.readAtMs > 0;
  const ms = timed ? after.readAtMs - before.readAtMs : elapsedMs;
  if (!(ms > 0)) throw new Error(`elapsed time must be > 0, got ${ms} ms`);
  const hz = after.ticksPerSecond || 100;
  const d = (k: (typeof ALL_FIELDS)[number]): number => {
    const v = after[k] - before[k];
    if (v < 0) throw new Error(`${k} ticks went backwards by ${-v}`);
    return v / hz;
  };
  let dataplaneUser = 0;
  for (const p of after.processes) {
    const q = before.processes.find((x) => x.name === p.name);
    if (!q) continue;
    if (q.pids.join(',') !== p.pids.join(','))
      throw new Error(`${p.name} restarted between samples (pids ${q.pids.join(',')} → ${p.pids.join(',')})`);
    dataplaneUser += p.userSeconds - q.userSeconds;
  }
  const agent =
    after.agentUserSeconds + after.agentSystemSeconds - (before.agentUserSeconds + before.agentSystemSeconds);
  const counted = ALL_FIELDS.reduce((sum, k) => sum + d(k), 0);
  return {
    seconds: ms / 1000,
    cpu: {
      system: d('system'),
      irq: d('irq'),
      softirq: d('softirq'),
      unsampled: timed ? (ms / 1000) * after.cpus.length - counted : 0,
      user: d('user') + d('nice'),
      dataplaneUser,
      agent,
    },
  };
}

/** Pure: idle windows pooled into one (their CPU and seconds summed), a steadier rate than any one of them. */
export function pooled(ws: readonly CpuWindow[]): CpuWindow {
  const cpu = { system: 0, irq: 0, softirq: 0, unsampled: 0, user: 0, dataplaneUser: 0, agent: 0 };
  let seconds = 0;
  for (const w of ws) {
    seconds += w.seconds;
    for (const k of KEYS) cpu[k] += w.cpu[k];
  }
  return { seconds, cpu };
}

/** The window less what the idle baseline spent per second over the same length of time. Negative means within noise of idle. */
export function netOfBaseline(w: CpuWindow, baseline: CpuWindow): CpuWindow {
  const cpu = { ...w.cpu };
  for (const k of KEYS) cpu[k] = w.cpu[k] - (baseline.cpu[k] / baseline.seconds) * w.seconds;
  return { seconds: w.seconds, cpu };
}

/** The headline's CPU of one node's window: kernel (system, irq, softirq, unsampled) and the dataplane processes' user time. */
export function dataplaneCpu(c: CpuSeconds): number {
  return kernelCpu(c) + c.dataplaneUser;
}

/** The kernel's share: system, irq, softirq and the busy time between ticks. */
export function kernelCpu(c: CpuSeconds): number {
  return c.system + c.irq + c.softirq + c.unsampled;
}

/** The work a round did in the metric's unit: Gbit moved, or thousands of requests/transactions. */
export function workOf(
  r: JobResult,
): { metric: 'cpu-per-gbit' | 'cpu-per-1k'; unit: string; amount: number } | undefined {
  const k = r.measurement?.kind;
  if (k?.$case === 'throughput')
    return { metric: 'cpu-per-gbit', unit: 'CPU-s/Gbit', amount: (k.value.bitsPerSecond * k.value.seconds) / 1e9 };
  if (k?.$case === 'http')
    return {
      metric: 'cpu-per-1k',
      unit: k.value.keepalive ? 'CPU-s/1k req' : 'CPU-s/1k conn',
      amount: Number(k.value.requests) / 1000,
    };
  if (k?.$case === 'rr')
    return {
      metric: 'cpu-per-1k',
      unit: k.value.connectPerTransaction ? 'CPU-s/1k conn' : 'CPU-s/1k req',
      amount: Number(k.value.transactions) / 1000,
    };
  return undefined;
}

export interface SamplePairIds {
  before?: string | undefined;
  after?: string | undefined;
}

export interface CpuCostInput {
  results: readonly JobResult[];
  /** Per round (same order as results): each side's bracket sample ids. */
  rounds: readonly { client: SamplePairIds; server: SamplePairIds }[];
  /** Each side's idle baseline sample ids (taken before the run). */
  baseline: { client: SamplePairIds; server: SamplePairIds };
  /**
   * Pool the pauses between this phase's rounds (one round's after-sample to
   * the next one's before-sample: no client runs) into the baseline, so that a
   * background that drifted since the run began is followed (default true).
   */
  poolGaps?: boolean;
  /** Client and server on one node (same-node paths): count it once. */
  sameNode: boolean;
  samples: ReadonlyMap<string, DataplaneSample>;
}

/** Per side, the median over rounds of the net cores busy by where they went. */
export interface RowCpu {
  client: CpuSeconds;
  server: CpuSeconds;
  /** Idle baseline, cores busy, per side. */
  baseline: { client: CpuSeconds; server: CpuSeconds };
  clientCpus: number[];
  serverCpus: number[];
}

export interface CpuCost {
  metric?: Metric;
  cpu?: RowCpu;
  /** Why there is no metric (samples without kernel CPU, a restart in a round, ...). */
  missing?: string;
}

function windowOf(ids: SamplePairIds, samples: ReadonlyMap<string, DataplaneSample>, what: string): CpuWindow {
  const a = ids.before ? samples.get(ids.before) : undefined;
  const b = ids.after ? samples.get(ids.after) : undefined;
  if (!a?.kernelCpu || !b?.kernelCpu) throw new Error(`${what}: no kernel CPU in its samples`);
  return cpuWindow(a.kernelCpu, b.kernelCpu, b.timeMs - a.timeMs);
}

const perSecond = (w: CpuWindow): CpuSeconds =>
  Object.fromEntries(KEYS.map((k) => [k, w.cpu[k] / w.seconds])) as unknown as CpuSeconds;

const medianOf = (ws: CpuSeconds[]): CpuSeconds =>
  Object.fromEntries(KEYS.map((k) => [k, summarise(ws.map((w) => w[k])).median])) as unknown as CpuSeconds;

/** The row's CPU per unit of work with its rounds and interval, and the breakdown by side; `missing` says why not. */
export function cpuCost(input: CpuCostInput): CpuCost {
  const { results, samples } = input;
  if (results.length === 0 || results.length !== input.rounds.length) return { missing: 'no measured rounds' };
  try {
    const gaps = (side: 'client' | 'server'): CpuWindow[] =>
      input.poolGaps === false
        ? []
        : input.rounds
            .slice(1)
            .map((r, i) =>
              windowOf({ before: input.rounds[i]?.[side].after, after: r[side].before }, samples, `${side} pause ${i}`),
            );
    const base = {
      client: pooled([windowOf(input.baseline.client, samples, 'client baseline'), ...gaps('client')]),
      server: pooled([windowOf(input.baseline.server, samples, 'server baseline'), ...gaps('server')]),
    };
    const perRound: number[] = [];
    const sides: { client: CpuSeconds; server: CpuSeconds }[] = [];
    let unit = '';
    let metric: 'cpu-per-gbit' | 'cpu-per-1k' = 'cpu-per-gbit';
    for (const [i, r] of results.entries()) {
      const work = workOf(r);
      if (!work || !(work.amount > 0)) return { missing: `round ${i}: no work measured` };
      unit = work.unit;
      metric = work.metric;
      const ids = input.rounds[i] as CpuCostInput['rounds'][number];
      const client = netOfBaseline(windowOf(ids.client, samples, `round ${i} client`), base.client);
      const server = netOfBaseline(windowOf(ids.server, samples, `round ${i} server`), base.server);
      const total = dataplaneCpu(client.cpu) + (input.sameNode ? 0 : dataplaneCpu(server.cpu));
      perRound.push(total / work.amount);
      sides.push({ client: perSecond(client), server: perSecond(server) });
    }
    const s = (id: string | undefined) => (id ? samples.get(id)?.kernelCpu?.cpus : undefined) ?? [];
    return {
      metric: {
        name: metric,
        unit,
        higherIsBetter: false,
        value: summarise(perRound).median,
        perRound,
        summary: summarise(perRound),
        source: 'rounds-median',
      },
      cpu: {
        client: medianOf(sides.map((x) => x.client)),
        server: medianOf(sides.map((x) => x.server)),
        baseline: { client: perSecond(base.client), server: perSecond(base.server) },
        clientCpus: s(input.baseline.client.before),
        serverCpus: s(input.baseline.server.before),
      },
    };
  } catch (err) {
    return { missing: (err as Error).message };
  }
}

/** What a measurement phase's record holds that the CPU cost needs (collector/runs/orchestrator.ts). */
export interface PhaseCpuDetail {
  serverNode?: string;
  clientNode?: string;
  cpuBaseline?: Record<string, { before: string; after: string }>;
  rounds?: {
    round: number;
    serverBefore?: string;
    serverAfter?: string;
    clientBefore?: string;
    clientAfter?: string;
  }[];
}

/** cpuCost from a phase's record and its measured results (in round order). */
export function phaseCpuCost(
  detail: PhaseCpuDetail,
  results: readonly JobResult[],
  samples: ReadonlyMap<string, DataplaneSample>,
): CpuCost {
  const { clientNode, serverNode, cpuBaseline } = detail;
  if (!clientNode || !serverNode || !cpuBaseline) return { missing: 'no idle CPU baseline in this run' };
  const rounds = results.map((r) => {
    const b = detail.rounds?.find((x) => x.round === r.round);
    return {
      client: { before: b?.clientBefore, after: b?.clientAfter },
      server: { before: b?.serverBefore, after: b?.serverAfter },
    };
  });
  return cpuCost({
    results,
    rounds,
    baseline: { client: cpuBaseline[clientNode] ?? {}, server: cpuBaseline[serverNode] ?? {} },
    sameNode: clientNode === serverNode,
    samples,
  });
}
