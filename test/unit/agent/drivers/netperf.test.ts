import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NETPERF_SELECTORS, netperf, parseNetperfOutput } from '../../../../agent/drivers/netperf.js';
import { netserver } from '../../../../agent/drivers/netserver.js';
import { clientDrivers, serverDrivers } from '../../../../agent/drivers/registry.js';
import { versionProbes } from '../../../../agent/tools/versions.js';
import type { AgentEntry } from '../../../../collector/agents/registry.js';
import { planRun } from '../../../../collector/runs/plan.js';
import { parseScenario } from '../../../../collector/runs/scenario.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { LatencyHistogram } from '../../../../core/histogram.js';
import { SERVER_DATA_PORTS, SERVER_PORTS, SERVER_TOOL_OF } from '../../../../core/tools.js';
import { agentEntry } from '../../../support/helpers/agent-entry.js';
import { fixture } from '../../../support/helpers/fixtures.js';

const spec = { targetHost: '198.18.200.2', targetPort: 12865, durationSeconds: 2 };
const pct = (r: ReturnType<typeof parseNetperfOutput>, p: number): number | undefined =>
  r.latency?.percentiles.find((x) => x.percentile === p)?.valueUs;

test("captured TCP_RR: count from bytes received, netperf's own rate, mean and percentiles", () => {
  const r = parseNetperfOutput(fixture('netperf-tcp-rr.txt'));
  assert.equal(r.connectPerTransaction, false);
  assert.equal(r.connections, 1);
  assert.equal(r.transactions, 133564);
  assert.equal(r.transactionsPerSecond, 66776.627);
  assert.equal(r.seconds, 133564 / 66776.627);
  assert.equal(r.errors, 0);
  assert.deepEqual(r.latency, {
    meanUs: 14.86,
    stdevUs: 17.95,
    maxUs: 3026,
    percentiles: [
      { percentile: 50, valueUs: 14 },
      { percentile: 90, valueUs: 16 },
      { percentile: 99, valueUs: 34 },
    ],
  });
});

test("the TCP_RR histogram holds every transaction, exact min/max, netperf's percentiles within a bucket", () => {
  const h = LatencyHistogram.fromProto(parseNetperfOutput(fixture('netperf-tcp-rr.txt')).histogram!);
  assert.equal(h.total, 133564);
  assert.equal(h.min, 12);
  assert.equal(h.max, 3026);
  assert.ok(Math.abs(h.percentile(50) - 14) <= 0.1, `p50 ${h.percentile(50)}`);
  assert.ok(Math.abs(h.percentile(90) - 16) <= 0.2, `p90 ${h.percentile(90)}`);
  // One rank past netperf's floor(p*N) the histogram is inside the interval spread toward the max.
  assert.ok(h.percentile(99) >= 34 && h.percentile(99) < 40, `p99 ${h.percentile(99)}`);
  // Above p99 netperf says nothing: p99.9 of the rebuilt histogram is interpolation, not a measurement.
  assert.ok(h.percentile(99.9) > 34 && h.percentile(99.9) < 3026);
});

test('captured TCP_CRR: a connection per transaction, latency includes connect and close', () => {
  const r = parseNetperfOutput(fixture('netperf-tcp-crr.txt'));
  assert.equal(r.connectPerTransaction, true);
  assert.equal(r.transactions, 22004);
  assert.equal(r.transactionsPerSecond, 11001.791);
  assert.equal(pct(r, 50), 82);
  assert.equal(pct(r, 99), 229);
  const h = LatencyHistogram.fromProto(r.histogram!);
  assert.equal(h.total, 22004);
  assert.equal(h.min, 67);
  assert.ok(Math.abs(h.percentile(50) - 82) <= 0.5, `p50 ${h.percentile(50)}`);
  assert.equal(
    netperf.parse(fixture('netperf-tcp-crr.txt'), { ...spec, connectPerTransaction: true }).kind?.$case,
    'rr',
  );
});

test('request and response sizes differ: transactions are bytes received over the response size', () => {
  const r = parseNetperfOutput(fixture('netperf-tcp-rr-r100-2000.txt'));
  assert.equal(r.transactions, 215854000 / 2000);
  assert.equal(r.transactionsPerSecond, 53958.213);
});

test("netperf's own failures are E_TOOL_FAILED with its words (exit 255, message on stdout, stderr empty)", () => {
  assert.equal(fixture('netperf-refused.stderr'), '');
  assert.ok(netperf.okExitCodes?.includes(255));
  const cases: Array<[string, RegExp]> = [
    [
      'netperf-refused.txt',
      /^netperf: establish control: are you sure there is a netserver listening on 198\.18\.200\.2 at port 12899\? establish_control could not/,
    ],
    ['netperf-bad-selector.txt', /^netperf: Could not open output selection file 'NO_SUCH_SELECTOR' errno 2$/],
  ];
  for (const [name, re] of cases) {
    assert.throws(
      () => parseNetperfOutput(fixture(name)),
      (err) => isCniBenchError(err, 'E_TOOL_FAILED') && re.test(err.message),
      name,
    );
  }
});

test('a netserver killed mid-run leaves no output (exit 1, its reason on stderr): a parse error, never zeros', () => {
  assert.equal(fixture('netperf-server-killed.txt'), '');
  assert.match(fixture('netperf-server-killed.stderr'), /^recv_response: partial response received: 0 bytes/);
  assert.ok(!netperf.okExitCodes?.includes(1), 'exit 1 is reported by core/process.ts with stderr');
  assert.throws(
    () => parseNetperfOutput(''),
    (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('netperf: cannot parse output (no output)'),
  );
});

test('truncated output is a parse error naming netperf, whether cut mid-line or at a line end', () => {
  const full = fixture('netperf-tcp-rr.txt');
  const atLineEnd = `${full.split('\n').slice(0, 10).join('\n')}\n`;
  for (const text of [fixture('netperf-truncated.txt'), atLineEnd]) {
    assert.throws(
      () => parseNetperfOutput(text),
      (err) =>
        isCniBenchError(err, 'E_PARSE') &&
        err.message.startsWith('netperf: cannot parse output') &&
        err.message.includes('cut short'),
    );
  }
});

test('inconsistent or foreign output is refused rather than turned into numbers', () => {
  const full = fixture('netperf-tcp-rr.txt');
  const bad: Array<[string, RegExp]> = [
    [full.replace('LOCAL_BYTES_RECVD=133564', 'LOCAL_BYTES_RECVD=13356'), /take 0\.200 s, not ELAPSED_TIME 2 s/],
    [full.replace('THROUGHPUT_UNITS=Trans/s', 'THROUGHPUT_UNITS=10^6bits/s'), /not Trans\/s/],
    [full.replace('DIRECTION=Send|Recv', 'DIRECTION=Send'), /not a TCP_RR\/TCP_CRR run/],
    [full.replace('P90_LATENCY=16', 'P90_LATENCY=fast'), /P90_LATENCY is not a non-negative number/],
    [full.replace('P90_LATENCY=16', 'P90_LATENCY=13').replace('P50_LATENCY=14', 'P50_LATENCY=30'), /not ascending/],
  ];
  for (const [text, re] of bad)
    assert.throws(
      () => parseNetperfOutput(text),
      (err) => isCniBenchError(err, 'E_PARSE') && re.test(err.message),
      String(re),
    );
  assert.throws(
    () => netperf.parse(full, { ...spec, connectPerTransaction: true }),
    (err) => isCniBenchError(err, 'E_PARSE') && /ran TCP_RR, asked for TCP_CRR/.test(err.message),
  );
});

test('a run in which no transaction completed is a failure, not a zero', () => {
  const none = fixture('netperf-tcp-crr.txt')
    .replace('LOCAL_BYTES_RECVD=22004', 'LOCAL_BYTES_RECVD=0')
    .replace(/TRANSACTION_RATE=[\d.]+/, 'TRANSACTION_RATE=0.000');
  assert.throws(
    () => parseNetperfOutput(none),
    (err) => isCniBenchError(err, 'E_TOOL_FAILED') && /no transaction completed/.test(err.message),
  );
});

test('percentiles interpolated just outside [min, max] are clamped into it (netperf buckets are 1% of a decade)', () => {
  const text = fixture('netperf-tcp-crr.txt')
    .replace('P50_LATENCY=82', 'P50_LATENCY=66')
    .replace('P90_LATENCY=110', 'P90_LATENCY=66')
    .replace('P99_LATENCY=229', 'P99_LATENCY=3790');
  const h = LatencyHistogram.fromProto(parseNetperfOutput(text).histogram!);
  assert.equal(h.min, 67);
  assert.equal(h.max, 3787);
  assert.equal(h.total, 22004);
});

test('client arguments: TCP_RR/TCP_CRR, whole seconds, sizes, fixed remote data port, keyval selectors', () => {
  assert.deepEqual(netperf.buildClientArgs({ ...spec, durationSeconds: 2.5 }), [
    '-P',
    '0',
    '-t',
    'TCP_RR',
    '-H',
    '198.18.200.2',
    '-p',
    '12865',
    '-l',
    '3',
    '--',
    '-r',
    '1,1',
    '-P',
    ',12866',
    '-k',
    NETPERF_SELECTORS.join(','),
  ]);
  const crr = netperf.buildClientArgs({ ...spec, connectPerTransaction: true, requestBytes: 100, responseBytes: 2000 });
  assert.deepEqual(crr.slice(2, 4), ['-t', 'TCP_CRR']);
  assert.deepEqual(crr.slice(11, 15), ['-r', '100,2000', '-P', ',12866']);
  assert.deepEqual(netserver.buildServerArgs({ port: 12865 }), ['-D', '-N', '-L', '0.0.0.0,inet', '-p', '12865']);
  // The fixtures were captured with exactly these selectors.
  assert.deepEqual(
    fixture('netperf-tcp-rr.txt')
      .trim()
      .split('\n')
      .map((l) => l.split('=')[0]),
    [...NETPERF_SELECTORS],
  );
});

test('what netperf cannot do is a validation error naming the field', () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ connections: 4 }, 'connections'],
    [{ requestBytes: 0 }, 'requestBytes'],
    [{ responseBytes: 70000 }, 'responseBytes'],
  ];
  for (const [extra, field] of cases) {
    assert.throws(
      () => netperf.buildClientArgs({ ...spec, ...extra }),
      (err) => isCniBenchError(err, 'E_VALIDATION') && err.message.includes(field),
      field,
    );
  }
});

test('registered, with netserver as its server on a known port and a data port, and discovered by -V', () => {
  assert.equal(clientDrivers.get('netperf'), netperf);
  assert.equal(serverDrivers.get('netserver'), netserver);
  assert.equal(SERVER_TOOL_OF.netperf, 'netserver');
  assert.deepEqual(SERVER_PORTS.netserver, { port: 12865, servicePort: 12865 });
  assert.equal(SERVER_DATA_PORTS.netserver, 12866);
  // The data port follows the control port, so a netserver behind a Service on its own ports has its own data port.
  assert.deepEqual(netperf.buildClientArgs({ ...spec, targetPort: 12865 }).slice(-3, -2), [',12866']);
  assert.deepEqual(netperf.buildClientArgs({ ...spec, targetPort: 12965 }).slice(-3, -2), [',12966']);
  for (const [tool, file] of [
    ['netperf', 'netperf-version.txt'],
    ['netserver', 'netperf-netserver-version.txt'],
  ] as const) {
    assert.equal(versionProbes.find((p) => p.tool === tool)?.parse(fixture(file)), '2.7.0', tool);
  }
});

function agent(id: string, tools: string[]): AgentEntry {
  return agentEntry(id, {
    podIp: '10.0.0.1',
    hostIp: '10.1.0.1',
    cpus: 2,
    tools: tools.map((name) => ({ name, version: '1', path: `/usr/bin/${name}` })),
  });
}

const RR = [
  { id: 'rr', kind: 'rr', path: 'pod-to-pod', mode: 'rr' },
  { id: 'crr', kind: 'rr', path: 'pod-to-pod', mode: 'crr' },
  { id: 'rr-c4', kind: 'rr', path: 'pod-to-pod', mode: 'rr', connections: 4 },
  { id: 'crr-svc', kind: 'rr', path: 'service', mode: 'crr' },
  { id: 'rr-svc', kind: 'rr', path: 'service', mode: 'rr' },
];

function tools(nodeTools: string[], serverTools = nodeTools): Record<string, string> {
  const plan = planRun(parseScenario({ measurements: RR }), [agent('a', serverTools), agent('b', nodeTools)], true);
  return Object.fromEntries(plan.measurements.map((m) => [m.id, `${m.tool}/${m.serverTool}`]));
}

test('plan without netperf (CI): the choices of before, sockperf for TCP_RR and the built-in for TCP_CRR', () => {
  // More than one connection: not sockperf (one connection), fortio's TCP mode where fortio is installed.
  assert.deepEqual(tools(['sockperf', 'fortio']), {
    rr: 'sockperf/sockperf',
    crr: 'tcp-rr/tcp-echo',
    'rr-c4': 'fortio-tcp/fortio-tcp',
    'crr-svc': 'tcp-rr/tcp-echo',
    'rr-svc': 'sockperf/sockperf',
  });
  assert.deepEqual(tools([]), {
    rr: 'tcp-rr/tcp-echo',
    crr: 'tcp-rr/tcp-echo',
    'rr-c4': 'tcp-rr/tcp-echo',
    'crr-svc': 'tcp-rr/tcp-echo',
    'rr-svc': 'tcp-rr/tcp-echo',
  });
});

test('plan with netperf on both ends: netperf for one-connection TCP_RR and TCP_CRR, through a Service too', () => {
  assert.deepEqual(tools(['sockperf', 'netperf', 'netserver']), {
    rr: 'netperf/netserver',
    crr: 'netperf/netserver',
    'rr-c4': 'tcp-rr/tcp-echo',
    'crr-svc': 'netperf/netserver',
    'rr-svc': 'netperf/netserver',
  });
  // netperf on the client but no netserver on the server: today's order.
  assert.deepEqual(tools(['sockperf', 'netperf'], ['sockperf', 'netperf']).crr, 'tcp-rr/tcp-echo');
});
