/**
 * Methodology guards: named warnings that a number measures something other
 * than the dataplane (the client's ports, CPU or link, a full conntrack table,
 * a busy server, failed requests, too few samples). Pure: the agent gathers
 * the evidence (agent/observe/), the collector and the report call this, and
 * every rule is tested at its threshold's edge. At most one Guard per code;
 * its message is one or two short sentences that carry the numbers.
 */
import type { ClientObservation, DataplaneSample, JobResult } from '../gen/cnibench/v1/agent.js';

export interface Guard {
  /** One of GuardCodes; a string so stored results from other versions still type-check. */
  code: string;
  message: string;
  /** The number is not a measurement of the dataplane at all: the report shows no headline value for the row. */
  invalidates?: boolean;
  /** The kernel counters behind the verdict (differences over the round), for the report. */
  counters?: Record<string, number>;
}

export const GuardCodes = {
  EPHEMERAL_PORTS: 'ephemeral-ports',
  CONNTRACK_FULL: 'conntrack-full',
  CLIENT_CPU_SATURATED: 'client-cpu-saturated',
  SERVER_CPU_SATURATED: 'server-cpu-saturated',
  ERRORS: 'errors',
  RETRANSMITS: 'retransmits',
  LINK_RATE: 'link-rate',
  FEW_SAMPLES: 'few-samples',
  CONNECTIONS_REFUSED: 'connections-refused',
  DISPERSION: 'dispersion',
} as const;

export type GuardCode = (typeof GuardCodes)[keyof typeof GuardCodes];

export interface GuardThresholds {
  /** TIME_WAIT peak / ephemeral ports at which new connections start to wait for a free port (fires at >=). */
  timeWaitShare: number;
  /** conntrack count / max at which the kernel is close to dropping new flows (>=). */
  conntrackShare: number;
  /** Client cores used / cores it may use at which the generator, not the network, sets the pace (>=). */
  clientCpuShare: number;
  /** Server cores used / cores it may use, likewise for the server (>=). */
  serverCpuShare: number;
  /** Failed / completed requests or transactions above which the rate counts failures (>). */
  errorShare: number;
  /** Retransmitted / sent segments above which loss shapes the result (>). */
  retransmitShare: number;
  /** Achieved / link bit rate at which the NIC is the bottleneck (>=). */
  linkRateShare: number;
  /** Rounds below which there is no useful confidence interval. */
  minRounds: number;
  /** Latency samples below which p99 (and so p99.9) rests on fewer than ~10 (~1) samples in its tail. */
  minSamplesP99: number;
  minSamplesP999: number;
  /** Payload bytes per TCP segment, to turn bytes into segments: the MSS of a 1500-byte MTU with timestamps. */
  segmentBytes: number;
  /**
   * Connection-seconds spent waiting for SYN retransmissions (1 s each, the
   * initial RTO) / connection-seconds of the round, above which the row's
   * number measures refused and retried connections, not the dataplane (>).
   */
  connectStallShare: number;
  /** Coefficient of variation of the rounds at which the interval is too wide to compare dataplanes (>=). */
  dispersionCv: number;
}

export const DEFAULT_GUARD_THRESHOLDS: Readonly<GuardThresholds> = Object.freeze({
  timeWaitShare: 0.8,
  conntrackShare: 0.9,
  clientCpuShare: 0.9,
  serverCpuShare: 0.9,
  errorShare: 0.01,
  retransmitShare: 0.001,
  linkRateShare: 0.9,
  minRounds: 3,
  minSamplesP99: 1000,
  minSamplesP999: 10000,
  segmentBytes: 1448,
  connectStallShare: 0.01,
  dispersionCv: 0.1,
});

export interface SamplePair {
  start?: DataplaneSample;
  end?: DataplaneSample;
}

export interface GuardInput {
  result: JobResult;
  /** Defaults to result.observation. */
  observation?: ClientObservation;
  /** Dataplane samples of the client's and the server's node at the round's boundaries. */
  clientSamples?: SamplePair;
  serverSamples?: SamplePair;
  /** The server job's tool (as in ServerUsage.tool) and the cores it can use (1 for a single-threaded server). */
  serverTool?: string;
  serverCapacityCores?: number;
  /**
   * TCP counters (nstat names, cumulative) of the client's and the server's
   * network namespaces at the round's boundaries (DataplaneSample.tcp_counters
   * of the namespace each end ran in).
   */
  clientTcp?: CounterPair;
  serverTcp?: CounterPair;
  /** Rounds of this measurement. */
  rounds: number;
  thresholds?: Partial<GuardThresholds>;
}

export interface CounterPair {
  start?: Readonly<Record<string, number>>;
  end?: Readonly<Record<string, number>>;
}

type Rule = (input: GuardInput, t: GuardThresholds) => string[];

/**
 * Every guard that fires for one result, in a fixed order. Evidence that is
 * absent (no observation, no samples, an unknown link speed or capacity)
 * never fires a guard: a missing number is not a warning.
 */
export function evaluateGuards(input: GuardInput): Guard[] {
  const t: GuardThresholds = { ...DEFAULT_GUARD_THRESHOLDS, ...input.thresholds };
  const input2 = { ...input, observation: input.observation ?? input.result.observation };
  const out: Guard[] = [];
  for (const [code, rule] of RULES) {
    const sentences = rule(input2, t);
    if (sentences.length > 0) out.push({ code, message: sentences.join(' ') });
  }
  const refused = connectionsRefused(input2, t);
  if (refused) out.push(refused);
  return out;
}

/**
 * The client holds one port per connection to a server address until its
 * TIME_WAIT ends (60 s); when the range runs out, connect() fails with
 * EADDRNOTAVAIL or (tcp_tw_reuse=1) waits for a reusable port. Tool-reported
 * connect errors only count on short connections with tcp_tw_reuse off,
 * since on keep-alive they are refusals, not port exhaustion.
 */
const ephemeralPorts: Rule = ({ observation: o, result }, t) => {
  if (!o) return [];
  const out: string[] = [];
  if (o.ephemeralPorts > 0 && o.timeWaitPeak >= t.timeWaitShare * o.ephemeralPorts) {
    out.push(
      `TIME_WAIT peaked at ${int(o.timeWaitPeak)} of ${int(o.ephemeralPorts)} ephemeral ports: short-connection rate is limited by the client's ports.`,
    );
  }
  const http = measurementOf(result, 'http');
  const toolConnect = http && !http.keepalive ? (http.socketErrors?.connect ?? 0) : 0;
  if (o.connectErrors > 0)
    out.push(`${int(o.connectErrors)} connects failed for want of a local port (EADDRNOTAVAIL).`);
  else if (toolConnect > 0 && !o.tcpTwReuse)
    out.push(`${int(toolConnect)} connect errors with tcp_tw_reuse off: the client may have run out of ports.`);
  return out;
};

/**
 * A full conntrack table drops new flows (nf_conntrack: table full), which
 * reads as dataplane loss. Fires on the fullest boundary sample per node, and
 * on drops the namespace counted between the two (the kernel's own evidence
 * that flows were lost, whatever the fill at the edges).
 */
const conntrackFull: Rule = ({ clientSamples, serverSamples }, t) => {
  const out: string[] = [];
  for (const [node, pair] of [
    ['client', clientSamples],
    ['server', serverSamples],
  ] as const) {
    const fullest = (['start', 'end'] as const)
      .map((when) => ({ when, s: pair?.[when] }))
      .filter((x): x is { when: 'start' | 'end'; s: DataplaneSample } => x.s !== undefined && x.s.conntrackMax > 0)
      .sort((a, b) => b.s.conntrackCount / b.s.conntrackMax - a.s.conntrackCount / a.s.conntrackMax)[0];
    if (fullest && fullest.s.conntrackCount >= t.conntrackShare * fullest.s.conntrackMax) {
      const { s, when } = fullest;
      out.push(
        `conntrack was ${pct(s.conntrackCount / s.conntrackMax)} full on the ${node} node at the ${when} (${int(s.conntrackCount)} of ${int(s.conntrackMax)} entries): new connections may be dropped.`,
      );
    }
    const dropped = pair?.start && pair.end ? pair.end.conntrackDrops - pair.start.conntrackDrops : 0;
    if (dropped > 0)
      out.push(
        `conntrack dropped ${int(dropped)} packets on the ${node} node during the measurement because no entry could be added (table full): those flows were lost.`,
      );
  }
  return out;
};

/** A generator near its cores measures itself; the dataplane's cost is hidden behind it. */
const clientCpu: Rule = ({ observation: o }, t) =>
  o && o.cpuCapacityCores > 0 && o.cpuCores >= t.clientCpuShare * o.cpuCapacityCores
    ? [
        `The load generator used ${cores(o.cpuCores)} of the ${cores(o.cpuCapacityCores)} cores it can use: the client, not the dataplane, may be the limit.`,
      ]
    : [];

/**
 * Likewise for the server. ServerUsage is cumulative, so the round's CPU is
 * end minus start of the same server process over the samples' time apart;
 * without such a pair, a ProcessUsage named like the tool in the end sample
 * (CPU since the sampler's previous sample) stands in.
 */
const serverCpu: Rule = ({ serverSamples, serverTool, serverCapacityCores: cap }, t) => {
  const end = serverSamples?.end;
  if (!serverTool || !cap || cap <= 0 || !end) return [];
  const start = serverSamples?.start;
  let used: number | undefined;
  const seconds = start ? (end.timeMs - start.timeMs) / 1000 : 0;
  if (start && seconds > 0) {
    const pairs = end.servers
      .filter((e) => e.tool === serverTool)
      .map((e) => [start.servers.find((s) => s.jobId === e.jobId && s.pid === e.pid), e] as const);
    const matched = pairs.filter(([s]) => s !== undefined);
    if (matched.length > 0)
      used = matched.reduce((sum, [s, e]) => sum + Math.max(0, e.cpuSeconds - (s?.cpuSeconds ?? 0)), 0) / seconds;
  }
  if (used === undefined) {
    const p = end.processes.find((x) => x.name === serverTool && x.cpuMillicores !== undefined);
    if (p?.cpuMillicores !== undefined) used = p.cpuMillicores / 1000;
  }
  return used !== undefined && used >= t.serverCpuShare * cap
    ? [
        `The ${serverTool} server used ${cores(used)} of the ${cores(cap)} cores it can use: the server, not the dataplane, may be the limit.`,
      ]
    : [];
};

/** A rate that counts failed requests is not a rate of work done. */
const errors: Rule = ({ result }, t) => {
  const http = measurementOf(result, 'http');
  if (http) {
    const se = http.socketErrors;
    const socket = se ? se.connect + se.read + se.write + se.timeout : 0;
    const failed = http.non2xx + socket;
    if (failed > 0 && (http.requests === 0 || failed / http.requests > t.errorShare)) {
      return [
        `${int(failed)} failures against ${int(http.requests)} requests (${http.requests > 0 ? pct(failed / http.requests) : 'all'}; ${int(http.non2xx)} non-2xx, ${int(socket)} socket errors): the rate includes failures.`,
      ];
    }
  }
  const rr = measurementOf(result, 'rr');
  if (rr && rr.errors > 0 && (rr.transactions === 0 || rr.errors / rr.transactions > t.errorShare)) {
    return [
      `${int(rr.errors)} errors against ${int(rr.transactions)} transactions (${rr.transactions > 0 ? pct(rr.errors / rr.transactions) : 'all'}): the rate includes failures.`,
    ];
  }
  return [];
};

/** Retransmits mean loss or overflowing queues on the path, which TCP answers by slowing down. */
const retransmits: Rule = ({ result, observation: o }, t) => {
  const out: string[] = [];
  const tp = measurementOf(result, 'throughput');
  if (tp && tp.protocol !== 'udp') {
    const segs = tp.bytes / t.segmentBytes;
    if (segs > 0 && tp.retransmits / segs > t.retransmitShare) {
      out.push(
        `${int(tp.retransmits)} retransmits, ${pct(tp.retransmits / segs)} of about ${int(segs)} segments sent: loss on the path is shaping the throughput.`,
      );
    }
  }
  if (o && o.tcpOutSegs > 0 && o.tcpRetransSegs / o.tcpOutSegs > t.retransmitShare) {
    out.push(
      `TCP retransmitted ${pct(o.tcpRetransSegs / o.tcpOutSegs)} of segments in the client's namespace (${int(o.tcpRetransSegs)} of ${int(o.tcpOutSegs)}): loss is shaping the result.`,
    );
  }
  return out;
};

/** Near the link's rate the NIC is the bottleneck, and every dataplane looks the same. */
const linkRate: Rule = ({ result, observation: o }, t) => {
  const tp = measurementOf(result, 'throughput');
  if (!tp || !o || o.linkSpeedMbps <= 0) return [];
  const link = o.linkSpeedMbps * 1e6;
  return tp.bitsPerSecond >= t.linkRateShare * link
    ? [
        `Throughput ${bits(tp.bitsPerSecond)} is ${pct(tp.bitsPerSecond / link)} of the ${bits(link)} link: the NIC, not the dataplane, is the limit.`,
      ]
    : [];
};

/**
 * Few rounds give a wide confidence interval (none below two). A tail
 * percentile from N samples rests on N×(1−p) of them: p99 of 1,000 samples
 * on 10, p99.9 of 10,000 on 10. Counted from the histogram, else from requests.
 */
const fewSamples: Rule = ({ result, rounds }, t) => {
  const out: string[] = [];
  if (rounds < t.minRounds)
    out.push(
      rounds <= 1
        ? `Only ${rounds} round: there is no confidence interval.`
        : `Only ${rounds} rounds: the confidence interval is wide.`,
    );
  const http = measurementOf(result, 'http');
  const rr = measurementOf(result, 'rr');
  const lat = http ?? rr;
  if (lat && (lat.latency || lat.histogram)) {
    const n = lat.histogram?.total ?? (http ? http.requests : (rr?.transactions ?? 0));
    if (n < t.minSamplesP99)
      out.push(
        `p99 and p99.9 rest on ${int(n)} latency samples (p99 needs ${int(t.minSamplesP99)}): both are unreliable.`,
      );
    else if (n < t.minSamplesP999)
      out.push(`p99.9 rests on ${int(n)} latency samples (it needs ${int(t.minSamplesP999)}): it is unreliable.`);
  }
  return out;
};

/** Counter differences over a pair; undefined when either end or the counter is missing (a missing number is not zero). */
function deltaOf(pair: CounterPair | undefined, name: string): number | undefined {
  const a = pair?.start?.[name];
  const b = pair?.end?.[name];
  return a === undefined || b === undefined ? undefined : Math.max(0, b - a);
}

/** Connection-seconds the round offered: connections (or streams) times its duration. */
function connectionSeconds(result: JobResult): number {
  const k = result.measurement?.kind;
  const wall = result.endedMs > result.startedMs ? (result.endedMs - result.startedMs) / 1000 : 0;
  if (k?.$case === 'http') return k.value.connections * (k.value.seconds || wall);
  if (k?.$case === 'rr') return Math.max(1, k.value.connections) * (k.value.seconds || wall);
  if (k?.$case === 'throughput') return Math.max(1, k.value.streams) * (k.value.seconds || wall);
  return 0;
}

const CLIENT_COUNTERS = [
  'TcpActiveOpens',
  'TcpExtTCPSynRetrans',
  'TcpExtTCPTimeouts',
  'TcpAttemptFails',
  'TcpExtTWRecycled',
] as const;
const SERVER_COUNTERS = [
  'TcpPassiveOpens',
  'TcpExtPAWSTimewait',
  'TcpExtListenOverflows',
  'TcpExtListenDrops',
  'TcpExtTCPReqQFullDrop',
  'TcpExtTCPChallengeACK',
] as const;

/**
 * Connections refused or retried, from the kernel's counters in both
 * namespaces. A SYN that a TIME_WAIT socket refuses (TcpExtPAWSTimewait: the
 * same 4-tuple reached the server before with another timestamp clock, as when
 * one client reaches one server port both directly and through a Service) or
 * that a full listen queue drops (ListenDrops) is sent again by the client one
 * second later (TcpExtTCPSynRetrans): that connection then idles for a second,
 * which at thousands of connections per second is most of the rate. Such a row
 * measures the retries, not the dataplane: it is invalid, not merely warned.
 * The client's retransmissions count each stall once; without client counters
 * the server's refusals stand in.
 */
function connectionsRefused(input: GuardInput, t: GuardThresholds): Guard | undefined {
  const { clientTcp, serverTcp, result } = input;
  const synRetrans = deltaOf(clientTcp, 'TcpExtTCPSynRetrans');
  const paws = deltaOf(serverTcp, 'TcpExtPAWSTimewait');
  const listen = Math.max(
    deltaOf(serverTcp, 'TcpExtListenDrops') ?? 0,
    deltaOf(serverTcp, 'TcpExtListenOverflows') ?? 0,
  );
  const reqq = deltaOf(serverTcp, 'TcpExtTCPReqQFullDrop') ?? 0;
  const stalls = synRetrans ?? (paws === undefined ? undefined : paws + listen + reqq);
  const offered = connectionSeconds(result);
  if (stalls === undefined || stalls === 0 || offered <= 0 || stalls / offered <= t.connectStallShare) return undefined;
  const counters: Record<string, number> = {};
  for (const [side, pair, names] of [
    ['client', clientTcp, CLIENT_COUNTERS],
    ['server', serverTcp, SERVER_COUNTERS],
  ] as const) {
    for (const n of names) {
      const d = deltaOf(pair, n);
      if (d !== undefined) counters[`${side}.${n}`] = d;
    }
  }
  const why: string[] = [];
  if (paws) why.push(`the server's TIME_WAIT sockets refused ${int(paws)} SYNs (TcpExtPAWSTimewait)`);
  if (listen) why.push(`its listen queue dropped ${int(listen)} (TcpExtListenDrops)`);
  if (reqq) why.push(`its SYN queue dropped ${int(reqq)} (TcpExtTCPReqQFullDrop)`);
  const retried =
    synRetrans !== undefined
      ? `the client sent ${int(synRetrans)} SYNs again (TcpExtTCPSynRetrans, 1 s each)`
      : `about ${int(stalls)} connections waited 1 s for a SYN retransmission`;
  const message = `Connections were refused or retried: ${[retried, ...why].join('; ')}, ${pct(stalls / offered)} of the round's ${int(offered)} connection-seconds. The rate measures the retries, not the dataplane: no number is reported.`;
  return { code: GuardCodes.CONNECTIONS_REFUSED, message, invalidates: true, counters };
}

/** A client's send lag at or above this share of the headline latency is named as a cause of spread. */
const SEND_LAG_SHARE = 0.25;

/**
 * A fixed-rate client's mean send lag (how late requests left against their
 * schedule; the built-in open-loop client reports it) over a row's rounds,
 * against the row's headline latency, both in µs; undefined where the tool
 * reports none or the headline is not a latency. Pure.
 */
export function sendLagOf(
  results: readonly JobResult[],
  head: { unit: string; value: number } | undefined,
): { meanUs: number; headlineUs: number } | undefined {
  const lags = results.flatMap((r) => {
    const k = r.measurement?.kind;
    return k?.$case === 'http' && k.value.latencyFromIntendedStart && k.value.sendLagMeanUs > 0
      ? [k.value.sendLagMeanUs]
      : [];
  });
  const scale = head?.unit === 'ms' ? 1000 : head?.unit === 'us' || head?.unit === 'µs' ? 1 : 0;
  if (!lags.length || !head || !scale || !Number.isFinite(head.value)) return undefined;
  return { meanUs: lags.reduce((a, b) => a + b, 0) / lags.length, headlineUs: head.value * scale };
}

/**
 * Rounds that disagree by a CV of 10% or more give an interval too wide to
 * tell two dataplanes apart. Says why where the evidence shows it: a
 * saturated client or server (their guards fired in a round), or a busy
 * machine (the nodes' load average over the phase above their CPUs).
 * Evaluated over a row's rounds, not per round.
 */
export function dispersionGuard(input: {
  cv: number | null;
  n: number;
  fired: readonly Guard[];
  loadAverage?: number;
  cpus?: number;
  /** The client's own send lag against its schedule and the headline latency, both in µs (sendLagOf). */
  clientSendLag?: { meanUs: number; headlineUs: number };
  thresholds?: Partial<GuardThresholds>;
}): Guard | undefined {
  const t: GuardThresholds = { ...DEFAULT_GUARD_THRESHOLDS, ...input.thresholds };
  if (input.cv === null || input.n < 2 || input.cv < t.dispersionCv) return undefined;
  const why: string[] = [];
  if (input.fired.some((g) => g.code === GuardCodes.CLIENT_CPU_SATURATED))
    why.push('the load generator saturates its CPU, so each round measures how much CPU it got');
  if (input.fired.some((g) => g.code === GuardCodes.SERVER_CPU_SATURATED)) why.push('the server saturates its CPU');
  if (input.loadAverage !== undefined && input.cpus !== undefined && input.cpus > 0 && input.loadAverage > input.cpus) {
    why.push(
      `the machine was busy (load average ${input.loadAverage.toFixed(1)} on ${input.cpus} CPUs): other work took CPU time from the rounds`,
    );
  }
  const lag = input.clientSendLag;
  if (lag && lag.headlineUs > 0 && lag.meanUs >= SEND_LAG_SHARE * lag.headlineUs) {
    why.push(
      `the client sent its requests ${(lag.meanUs / 1000).toFixed(2)} ms late on average (its own timer and event loop), ${pct(lag.meanUs / lag.headlineUs)} of the headline latency and inside every sample, so the rounds differ by the client's timing more than by the path`,
    );
  }
  const cause = why.length
    ? ` Why: ${why.join('; ')}.`
    : ' No saturation or machine load was seen: more or longer rounds may settle it.';
  return {
    code: GuardCodes.DISPERSION,
    message: `The rounds spread by a CV of ${pct(input.cv)} (${t.dispersionCv * 100}% or more): the interval is too wide to compare dataplanes.${cause}`,
  };
}

const RULES: ReadonlyArray<readonly [GuardCode, Rule]> = [
  [GuardCodes.EPHEMERAL_PORTS, ephemeralPorts],
  [GuardCodes.CONNTRACK_FULL, conntrackFull],
  [GuardCodes.CLIENT_CPU_SATURATED, clientCpu],
  [GuardCodes.SERVER_CPU_SATURATED, serverCpu],
  [GuardCodes.ERRORS, errors],
  [GuardCodes.RETRANSMITS, retransmits],
  [GuardCodes.LINK_RATE, linkRate],
  [GuardCodes.FEW_SAMPLES, fewSamples],
];

type Kind = NonNullable<NonNullable<JobResult['measurement']>['kind']>;
function measurementOf(result: JobResult, c: 'throughput'): Extract<Kind, { $case: 'throughput' }>['value'] | undefined;
function measurementOf(result: JobResult, c: 'http'): Extract<Kind, { $case: 'http' }>['value'] | undefined;
function measurementOf(result: JobResult, c: 'rr'): Extract<Kind, { $case: 'rr' }>['value'] | undefined;
function measurementOf(result: JobResult, c: Kind['$case']): Kind['value'] | undefined {
  const k = result.measurement?.kind;
  return k?.$case === c ? k.value : undefined;
}

const int = (x: number): string => Math.round(x).toLocaleString('en-US');
const cores = (x: number): string => String(Number(x.toFixed(2)));
function pct(share: number): string {
  const p = share * 100;
  return `${p >= 10 ? Math.round(p) : Number(p.toFixed(p >= 1 ? 1 : 2))}%`;
}
function bits(bps: number): string {
  return bps >= 1e9 ? `${Number((bps / 1e9).toFixed(2))} Gbit/s` : `${Number((bps / 1e6).toFixed(1))} Mbit/s`;
}
