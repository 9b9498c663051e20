import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseLoadAverage } from '../../../agent/samplers/dataplane-sampler.js';
import type {
  ClientObservation,
  DataplaneSample,
  HttpLoadResult,
  JobResult,
  Measurement,
  RequestResponseResult,
  ThroughputResult,
} from '../../../gen/cnibench/v1/agent.js';
import {
  DEFAULT_GUARD_THRESHOLDS,
  dispersionGuard,
  evaluateGuards,
  type Guard,
  type GuardInput,
  sendLagOf,
} from '../../../report/guards.js';
import { fixture } from '../../support/helpers/fixtures.js';

// The evaluator is pure arithmetic over proto messages, so its inputs are built
// here field by field; the numbers that matter sit on each threshold's edge.

const obs = (o: Partial<ClientObservation> = {}): ClientObservation => ({
  cpuCores: 0.5,
  cpuCapacityCores: 2,
  timeWaitPeak: 0,
  ephemeralPorts: 28232,
  tcpTwReuse: false,
  connectErrors: 0,
  linkSpeedMbps: 0,
  tcpRetransSegs: 0,
  tcpOutSegs: 0,
  ...o,
});
const result = (kind: Measurement['kind'], observation?: ClientObservation): JobResult => ({
  jobId: 'j',
  runId: 'r',
  tool: 'wrk',
  toolVersion: '4.2.0',
  measurement: { kind },
  rawOutput: '',
  startedMs: 0,
  endedMs: 0,
  warnings: [],
  observation,
  round: 0,
});
const http = (h: Partial<HttpLoadResult> = {}): Measurement['kind'] => ({
  $case: 'http',
  value: {
    connections: 16,
    keepalive: true,
    seconds: 2,
    requests: 100_000,
    requestsPerSecond: 50_000,
    non2xx: 0,
    socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 },
    latency: undefined,
    histogram: undefined,
    targetQps: 0,
    latencyFromIntendedStart: false,
    sendLagMeanUs: 0,
    ...h,
  },
});
const rr = (r: Partial<RequestResponseResult> = {}): Measurement['kind'] => ({
  $case: 'rr',
  value: {
    connectPerTransaction: false,
    connections: 1,
    seconds: 2,
    transactions: 100_000,
    transactionsPerSecond: 50_000,
    errors: 0,
    latency: undefined,
    histogram: undefined,
    ...r,
  },
});
const tput = (t: Partial<ThroughputResult> = {}): Measurement['kind'] => ({
  $case: 'throughput',
  value: {
    protocol: 'tcp',
    streams: 1,
    seconds: 10,
    bytes: 1448e6,
    bitsPerSecond: 1e9,
    senderBitsPerSecond: 1e9,
    retransmits: 0,
    jitterMs: 0,
    lostPackets: 0,
    packets: 0,
    targetBitsPerSecond: 0,
    ...t,
  },
});
const sample = (s: Partial<DataplaneSample> = {}): DataplaneSample => ({
  runId: 'r',
  samplingJobId: 's',
  timeMs: 0,
  iptablesRules: 0,
  kubeServicesRules: 0,
  conntrackCount: 0,
  conntrackMax: 262144,
  chains: [],
  errors: [],
  iptablesBackend: 'nft',
  iptablesTableRules: {},
  nftSets: [],
  processes: [],
  bpf: undefined,
  notes: [],
  servers: [],
  serversOnly: false,
  rulesTimeMs: 0,
  conntrackDrops: 0,
  tcpCounters: [],
  loadAverage: 0,
  machineCpus: 0,
  cilium: undefined,
  kernelCpu: undefined,
  hubble: undefined,
  ...s,
});

const run = (input: Partial<GuardInput> & { result: JobResult }): Guard[] => evaluateGuards({ rounds: 5, ...input });
const codes = (g: Guard[]): string[] => g.map((x) => x.code);
const only = (g: Guard[], code: string): Guard => {
  const hit = g.filter((x) => x.code === code);
  assert.equal(hit.length, 1, JSON.stringify(g));
  return hit[0] as Guard;
};

test('a clean keep-alive result with ample evidence fires nothing', () => {
  assert.deepEqual(run({ result: result(http(), obs()), clientSamples: { start: sample(), end: sample() } }), []);
});

test('the default thresholds are frozen and are what the rules document', () => {
  assert.ok(Object.isFrozen(DEFAULT_GUARD_THRESHOLDS));
  assert.equal(DEFAULT_GUARD_THRESHOLDS.timeWaitShare, 0.8);
  assert.equal(DEFAULT_GUARD_THRESHOLDS.errorShare, 0.01);
  assert.equal(DEFAULT_GUARD_THRESHOLDS.retransmitShare, 0.001);
});

test('ephemeral-ports: TIME_WAIT at 80% of the port range fires, one below does not', () => {
  // 28,232 is the default ip_local_port_range (32768-60999) captured on this machine; 0.8 of it is 22,585.6.
  const g = only(run({ result: result(http({ keepalive: false }), obs({ timeWaitPeak: 22586 })) }), 'ephemeral-ports');
  assert.equal(
    g.message,
    "TIME_WAIT peaked at 22,586 of 28,232 ephemeral ports: short-connection rate is limited by the client's ports.",
  );
  assert.deepEqual(codes(run({ result: result(http({ keepalive: false }), obs({ timeWaitPeak: 22585 })) })), []);
  // An unknown port range (0) never fires.
  assert.deepEqual(codes(run({ result: result(http(), obs({ timeWaitPeak: 5, ephemeralPorts: 0 })) })), []);
});

test('ephemeral-ports: kernel-seen connect errors fire; tool connect errors only on short connections with tcp_tw_reuse off', () => {
  assert.match(
    only(run({ result: result(http(), obs({ connectErrors: 3 })) }), 'ephemeral-ports').message,
    /^3 connects failed for want of a local port \(EADDRNOTAVAIL\)\.$/,
  );
  const short = http({
    keepalive: false,
    requests: 100_000,
    socketErrors: { connect: 16, read: 0, write: 0, timeout: 0 },
  });
  assert.match(
    only(run({ result: result(short, obs({ tcpTwReuse: false })) }), 'ephemeral-ports').message,
    /^16 connect errors with tcp_tw_reuse off: the client may have run out of ports\.$/,
  );
  assert.deepEqual(codes(run({ result: result(short, obs({ tcpTwReuse: true })) })), []);
  const keep = http({ keepalive: true, socketErrors: { connect: 16, read: 0, write: 0, timeout: 0 } });
  assert.deepEqual(codes(run({ result: result(keep, obs({ tcpTwReuse: false })) })), []);
  // No observation, no evidence.
  assert.deepEqual(codes(run({ result: result(short) })), []);
});

test('ephemeral-ports: both causes are named in one guard', () => {
  const g = only(
    run({
      result: result(http({ keepalive: false }), obs({ timeWaitPeak: 1000, ephemeralPorts: 1000, connectErrors: 16 })),
    }),
    'ephemeral-ports',
  );
  assert.match(g.message, /^TIME_WAIT peaked at 1,000 of 1,000 .* 16 connects failed/);
});

test('conntrack-full: 90% in either boundary sample of either node fires, naming the node and the fuller sample', () => {
  const edge = Math.ceil(0.9 * 262144); // 235,930
  const g = only(
    run({
      result: result(http(), obs()),
      serverSamples: { start: sample({ conntrackCount: 1000 }), end: sample({ conntrackCount: edge }) },
    }),
    'conntrack-full',
  );
  assert.equal(
    g.message,
    'conntrack was 90% full on the server node at the end (235,930 of 262,144 entries): new connections may be dropped.',
  );
  assert.match(
    only(
      run({ result: result(http()), clientSamples: { start: sample({ conntrackCount: 262144 }) } }),
      'conntrack-full',
    ).message,
    /100% full on the client node at the start/,
  );
  assert.deepEqual(
    codes(
      run({
        result: result(http()),
        clientSamples: { end: sample({ conntrackCount: edge - 1 }) },
        serverSamples: { start: sample({ conntrackCount: edge - 1 }) },
      }),
    ),
    [],
  );
  // conntrack_max 0 means it could not be read.
  assert.deepEqual(
    codes(run({ result: result(http()), clientSamples: { end: sample({ conntrackCount: 5, conntrackMax: 0 }) } })),
    [],
  );
});

test('conntrack-full: drops counted between the boundary samples fire whatever the fill; none, or one sample only, do not', () => {
  const g = only(
    run({
      result: result(http()),
      clientSamples: { start: sample({ conntrackDrops: 40 }), end: sample({ conntrackDrops: 52 }) },
    }),
    'conntrack-full',
  );
  assert.equal(
    g.message,
    'conntrack dropped 12 packets on the client node during the measurement because no entry could be added (table full): those flows were lost.',
  );
  assert.deepEqual(
    codes(
      run({
        result: result(http()),
        clientSamples: { start: sample({ conntrackDrops: 40 }), end: sample({ conntrackDrops: 40 }) },
      }),
    ),
    [],
  );
  assert.deepEqual(codes(run({ result: result(http()), serverSamples: { end: sample({ conntrackDrops: 9 }) } })), []);
});

test('client-cpu-saturated: 90% of min(threads, cpus) fires', () => {
  const g = only(run({ result: result(http(), obs({ cpuCores: 1.8, cpuCapacityCores: 2 })) }), 'client-cpu-saturated');
  assert.equal(
    g.message,
    'The load generator used 1.8 of the 2 cores it can use: the client, not the dataplane, may be the limit.',
  );
  assert.deepEqual(codes(run({ result: result(http(), obs({ cpuCores: 1.79, cpuCapacityCores: 2 })) })), []);
  assert.deepEqual(codes(run({ result: result(http(), obs({ cpuCores: 1.8, cpuCapacityCores: 0 })) })), []);
});

test('server-cpu-saturated: cumulative ServerUsage of the same process between the two samples', () => {
  const srv = (timeMs: number, cpuSeconds: number, pid = 42): DataplaneSample =>
    sample({
      timeMs,
      servers: [
        { tool: 'http-echo', jobId: 'srv', pid, cpuSeconds, rssBytes: 0 },
        { tool: 'iperf3', jobId: 'other', pid: 7, cpuSeconds: 0, rssBytes: 0 },
      ],
    });
  // 9 s of CPU over 10 s is 0.9 of one core.
  const hot = { start: srv(1000, 1), end: srv(11_000, 10) };
  const g = only(
    run({ result: result(http()), serverSamples: hot, serverTool: 'http-echo', serverCapacityCores: 1 }),
    'server-cpu-saturated',
  );
  assert.equal(
    g.message,
    'The http-echo server used 0.9 of the 1 cores it can use: the server, not the dataplane, may be the limit.',
  );
  assert.deepEqual(
    codes(
      run({
        result: result(http()),
        serverSamples: { start: srv(1000, 1), end: srv(11_000, 9.99) },
        serverTool: 'http-echo',
        serverCapacityCores: 1,
      }),
    ),
    [],
  );
  // The same numbers against two cores, another tool, no capacity, or a restarted server (other pid): nothing.
  assert.deepEqual(
    codes(run({ result: result(http()), serverSamples: hot, serverTool: 'http-echo', serverCapacityCores: 2 })),
    [],
  );
  assert.deepEqual(
    codes(run({ result: result(http()), serverSamples: hot, serverTool: 'iperf3', serverCapacityCores: 1 })),
    [],
  );
  assert.deepEqual(codes(run({ result: result(http()), serverSamples: hot, serverTool: 'http-echo' })), []);
  assert.deepEqual(
    codes(
      run({
        result: result(http()),
        serverSamples: { start: srv(1000, 1), end: srv(11_000, 10, 43) },
        serverTool: 'http-echo',
        serverCapacityCores: 1,
      }),
    ),
    [],
  );
});

test('server-cpu-saturated: without a ServerUsage pair, a ProcessUsage of the tool in the end sample counts', () => {
  const end = (m: number): DataplaneSample =>
    sample({ processes: [{ name: 'http-echo', pids: [42], cpuMillicores: m, rssBytes: 0, threads: 1 }] });
  assert.deepEqual(
    codes(
      run({
        result: result(http()),
        serverSamples: { end: end(900) },
        serverTool: 'http-echo',
        serverCapacityCores: 1,
      }),
    ),
    ['server-cpu-saturated'],
  );
  assert.deepEqual(
    codes(
      run({
        result: result(http()),
        serverSamples: { end: end(899) },
        serverTool: 'http-echo',
        serverCapacityCores: 1,
      }),
    ),
    [],
  );
});

test('errors: http failures over 1% of requests fire, exactly 1% does not', () => {
  const failing = http({ requests: 10_000, non2xx: 60, socketErrors: { connect: 0, read: 41, write: 0, timeout: 0 } });
  const g = only(run({ result: result(failing) }), 'errors');
  assert.equal(
    g.message,
    '101 failures against 10,000 requests (1%; 60 non-2xx, 41 socket errors): the rate includes failures.',
  );
  assert.deepEqual(codes(run({ result: result(http({ requests: 10_000, non2xx: 100 })) })), []);
  assert.match(
    only(
      run({ result: result(http({ requests: 0, socketErrors: { connect: 16, read: 0, write: 0, timeout: 0 } })) }),
      'errors',
    ).message,
    /against 0 requests \(all;/,
  );
});

test('errors: request/response errors over 1% of transactions', () => {
  assert.match(
    only(run({ result: result(rr({ transactions: 1000, errors: 11 })) }), 'errors').message,
    /^11 errors against 1,000 transactions \(1\.1%\)/,
  );
  assert.deepEqual(codes(run({ result: result(rr({ transactions: 1000, errors: 10 })) })), []);
});

test('retransmits: iperf3 retransmits over 0.1% of bytes/1448 segments, or the namespace counters over 0.1%', () => {
  // 1,448,000,000 bytes are 1,000,000 segments of 1,448 bytes.
  const g = only(run({ result: result(tput({ retransmits: 1001 })) }), 'retransmits');
  assert.equal(
    g.message,
    '1,001 retransmits, 0.1% of about 1,000,000 segments sent: loss on the path is shaping the throughput.',
  );
  assert.deepEqual(codes(run({ result: result(tput({ retransmits: 1000 })) })), []);
  assert.deepEqual(codes(run({ result: result(tput({ protocol: 'udp', retransmits: 5000 })) })), []);
  const snmp = only(run({ result: result(http(), obs({ tcpRetransSegs: 161, tcpOutSegs: 159983 })) }), 'retransmits');
  assert.equal(
    snmp.message,
    "TCP retransmitted 0.1% of segments in the client's namespace (161 of 159,983): loss is shaping the result.",
  );
  assert.deepEqual(codes(run({ result: result(http(), obs({ tcpRetransSegs: 159, tcpOutSegs: 159983 })) })), []);
});

test('link-rate: throughput at 90% of a known link speed fires; unknown (0) never', () => {
  const g = only(run({ result: result(tput({ bitsPerSecond: 9e9 }), obs({ linkSpeedMbps: 10_000 })) }), 'link-rate');
  assert.equal(
    g.message,
    'Throughput 9 Gbit/s is 90% of the 10 Gbit/s link: the NIC, not the dataplane, is the limit.',
  );
  assert.deepEqual(codes(run({ result: result(tput({ bitsPerSecond: 8.99e9 }), obs({ linkSpeedMbps: 10_000 })) })), []);
  assert.deepEqual(codes(run({ result: result(tput({ bitsPerSecond: 40e9 }), obs({ linkSpeedMbps: 0 })) })), []);
});

test('few-samples: fewer than 3 rounds, and tail percentiles on too few latency samples', () => {
  assert.equal(
    only(run({ result: result(tput()), rounds: 2 }), 'few-samples').message,
    'Only 2 rounds: the confidence interval is wide.',
  );
  assert.equal(
    only(run({ result: result(tput()), rounds: 1 }), 'few-samples').message,
    'Only 1 round: there is no confidence interval.',
  );
  assert.deepEqual(codes(run({ result: result(tput()), rounds: 3 })), []);
  const hist = (total: number) => ({ subBucketBits: 3, indexes: [], counts: [], total, minUs: 0, maxUs: 0, sumUs: 0 });
  assert.equal(
    only(run({ result: result(http({ histogram: hist(999) })) }), 'few-samples').message,
    'p99 and p99.9 rest on 999 latency samples (p99 needs 1,000): both are unreliable.',
  );
  assert.equal(
    only(run({ result: result(http({ histogram: hist(1000) })) }), 'few-samples').message,
    'p99.9 rests on 1,000 latency samples (it needs 10,000): it is unreliable.',
  );
  assert.deepEqual(codes(run({ result: result(http({ histogram: hist(10_000) })) })), []);
  // Without a histogram, latency percentiles rest on the transaction count.
  const lat = { meanUs: 10, stdevUs: 1, maxUs: 20, percentiles: [{ percentile: 99, valueUs: 15 }] };
  assert.match(
    only(run({ result: result(rr({ transactions: 5000, latency: lat })), rounds: 2 }), 'few-samples').message,
    /^Only 2 rounds: .* p99\.9 rests on 5,000 latency samples/,
  );
});

test('thresholds can be overridden one at a time', () => {
  assert.deepEqual(
    codes(
      run({
        result: result(http(), obs({ cpuCores: 1.5, cpuCapacityCores: 2 })),
        thresholds: { clientCpuShare: 0.75 },
      }),
    ),
    ['client-cpu-saturated'],
  );
});

test('observation comes from the result unless given, and guards come in a fixed order', () => {
  const r = result(
    tput({ bitsPerSecond: 9.5e9, retransmits: 5000 }),
    obs({ linkSpeedMbps: 10_000, cpuCores: 2, cpuCapacityCores: 2 }),
  );
  assert.deepEqual(codes(run({ result: r, rounds: 1 })), [
    'client-cpu-saturated',
    'retransmits',
    'link-rate',
    'few-samples',
  ]);
  assert.deepEqual(codes(run({ result: r, rounds: 3, observation: obs() })), ['retransmits']);
});

// connections-refused: 64 connections x 2 s = 128 connection-seconds; each SYN retransmission stalls one for 1 s.
const counters = (start: Record<string, number>, end: Record<string, number>) => ({ start, end });
const sc = http({ connections: 64, keepalive: false, seconds: 2 });

test('connections-refused: SYN retransmissions over 1% of the connection-seconds invalidate the row, with the counters', () => {
  const g = run({
    result: result(sc),
    clientTcp: counters(
      { TcpExtTCPSynRetrans: 10, TcpActiveOpens: 100 },
      { TcpExtTCPSynRetrans: 12, TcpActiveOpens: 30_100 },
    ),
    serverTcp: counters({ TcpExtPAWSTimewait: 5 }, { TcpExtPAWSTimewait: 7 }),
  });
  const refused = g.find((x) => x.code === 'connections-refused');
  assert.ok(refused, 'fires at 2 stalls of 128 connection-seconds (1.6%)');
  assert.equal(refused.invalidates, true);
  assert.deepEqual(refused.counters, {
    'client.TcpActiveOpens': 30_000,
    'client.TcpExtTCPSynRetrans': 2,
    'server.TcpExtPAWSTimewait': 2,
  });
  assert.match(refused.message, /sent 2 SYNs again.*TIME_WAIT sockets refused 2 SYNs \(TcpExtPAWSTimewait\)/);
});

test('connections-refused: one stall in 128 connection-seconds (0.8%) is silent, as are missing counters', () => {
  assert.deepEqual(
    codes(run({ result: result(sc), clientTcp: counters({ TcpExtTCPSynRetrans: 0 }, { TcpExtTCPSynRetrans: 1 }) })),
    [],
  );
  assert.deepEqual(codes(run({ result: result(sc), clientTcp: { start: { TcpExtTCPSynRetrans: 0 } } })), []);
  assert.deepEqual(codes(run({ result: result(sc), clientTcp: counters({}, {}) })), []);
});

test('connections-refused: without client counters the server refusals and listen drops stand in', () => {
  const g = run({
    result: result(sc),
    serverTcp: counters(
      { TcpExtPAWSTimewait: 0, TcpExtListenDrops: 0 },
      { TcpExtPAWSTimewait: 1, TcpExtListenDrops: 2 },
    ),
  });
  assert.deepEqual(codes(g), ['connections-refused']);
  assert.match(g[0]?.message ?? '', /about 3 connections waited 1 s/);
});

test('connections-refused: a single-connection TCP_CRR round with one SYN retransmission is invalid', () => {
  const g = run({
    result: result(rr({ connectPerTransaction: true, connections: 1, seconds: 2 })),
    clientTcp: counters({ TcpExtTCPSynRetrans: 3 }, { TcpExtTCPSynRetrans: 4 }),
  });
  assert.deepEqual(codes(g), ['connections-refused']);
});

test('dispersion: rounds at CV 10% or more fire, naming a saturated client or a busy machine; under 10% or one round is silent', () => {
  assert.equal(dispersionGuard({ cv: 0.099, n: 3, fired: [] }), undefined);
  assert.equal(dispersionGuard({ cv: 0.5, n: 1, fired: [] }), undefined);
  assert.equal(dispersionGuard({ cv: null, n: 0, fired: [] }), undefined);
  const plain = dispersionGuard({ cv: 0.1, n: 3, fired: [] });
  assert.equal(plain?.code, 'dispersion');
  assert.match(plain?.message ?? '', /CV of 10% .*No saturation or machine load was seen/);
  const busy = dispersionGuard({
    cv: 0.25,
    n: 3,
    fired: [{ code: 'client-cpu-saturated', message: '' }],
    loadAverage: 7.5,
    cpus: 2,
  });
  assert.match(busy?.message ?? '', /load generator saturates its CPU.*load average 7\.5 on 2 CPUs/);
  assert.doesNotMatch(dispersionGuard({ cv: 0.25, n: 3, fired: [], loadAverage: 1.5, cpus: 2 })?.message ?? '', /busy/);
});

test("dispersion names the client's own send lag when it is a large share of the headline latency", () => {
  // The built-in open-loop client at 1000 QPS: 0.9 ms of timer lag inside a 1.4 ms p50.
  const late = dispersionGuard({ cv: 0.113, n: 3, fired: [], clientSendLag: { meanUs: 900, headlineUs: 1400 } });
  assert.match(
    late?.message ?? '',
    /Why: the client sent its requests 0\.90 ms late on average .*64% of the headline latency/,
  );
  assert.doesNotMatch(late?.message ?? '', /No saturation/);
  // A small share is not a cause.
  const small = dispersionGuard({ cv: 0.113, n: 3, fired: [], clientSendLag: { meanUs: 100, headlineUs: 1400 } });
  assert.match(small?.message ?? '', /No saturation or machine load was seen/);
  // From results: only fixed-rate results timed from the intended start carry it; the headline's unit converts.
  const lagged = (us: number) => result(http({ targetQps: 1000, latencyFromIntendedStart: true, sendLagMeanUs: us }));
  assert.deepEqual(sendLagOf([lagged(800), lagged(1000)], { unit: 'ms', value: 1.5 }), {
    meanUs: 900,
    headlineUs: 1500,
  });
  assert.equal(sendLagOf([result(http())], { unit: 'ms', value: 1.5 }), undefined);
  assert.equal(sendLagOf([lagged(800)], { unit: 'req/s', value: 1000 }), undefined);
});

test('the load average parser reads a real /proc/loadavg and refuses a cut one', () => {
  assert.ok(parseLoadAverage(fixture('observe/proc-loadavg.txt')) > 0);
  assert.throws(() => parseLoadAverage('0.5'), /\/proc\/loadavg/);
});
