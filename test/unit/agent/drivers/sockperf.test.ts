import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSockperfPingPong, sockperf } from '../../../../agent/drivers/sockperf.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { LatencyHistogram } from '../../../../core/histogram.js';
import { fixture } from '../../../support/helpers/fixtures.js';

const near = (actual: number, expected: number, rel: number): boolean => Math.abs(actual - expected) <= rel * expected;

test('--full-rtt output: counts, round-trip mean and the exact percentiles sockperf printed', () => {
  const r = parseSockperfPingPong(fixture('sockperf-pp-rtt.txt'));
  assert.equal(r.connectPerTransaction, false);
  assert.equal(r.connections, 1);
  assert.equal(r.seconds, 2.55);
  assert.equal(r.transactions, 35512);
  assert.equal(r.transactionsPerSecond, 35512 / 2.55);
  assert.equal(r.errors, 0);
  assert.equal(r.latency?.meanUs, 71.709);
  assert.equal(r.latency?.stdevUs, 38.782);
  assert.equal(r.latency?.maxUs, 3915.869);
  assert.deepEqual(r.latency?.percentiles, [
    { percentile: 25, valueUs: 66.387 },
    { percentile: 50, valueUs: 73.204 },
    { percentile: 75, valueUs: 82.733 },
    { percentile: 90, valueUs: 93.798 },
    { percentile: 99, valueUs: 123.081 },
    { percentile: 99.9, valueUs: 212.509 },
    { percentile: 99.99, valueUs: 1600.214 },
    { percentile: 99.999, valueUs: 3915.869 },
  ]);
});

test("the histogram holds every observation, exact min/max, percentiles within a bucket of sockperf's", () => {
  const r = parseSockperfPingPong(fixture('sockperf-pp-rtt.txt'));
  const h = LatencyHistogram.fromProto(r.histogram!);
  assert.equal(h.total, 35512);
  assert.equal(h.min, 6.328);
  assert.equal(h.max, 3915.869);
  for (const [p, v] of [
    [25, 66.387],
    [50, 73.204],
    [90, 93.798],
    [99, 123.081],
  ] as const) {
    assert.ok(near(h.percentile(p), v, 0.01), `p${p}: ${h.percentile(p)} vs sockperf ${v}`);
  }
  // In the sparse tail the histogram's rank (ceil) is one past sockperf's (round) and lands inside the
  // uniformly spread interval up to the next printed point: the documented approximation.
  const tail = h.percentile(99.9);
  assert.ok(tail >= 212.509 && tail < 1600.214, `p99.9 ${tail}`);
});

test('one-way output (no --full-rtt) is doubled into round trips', () => {
  const r = parseSockperfPingPong(fixture('sockperf-pp-oneway.txt'));
  assert.equal(r.transactions, 34607);
  assert.equal(r.latency?.meanUs, 2 * 36.794);
  assert.equal(r.latency?.stdevUs, 2 * 23.46);
  assert.equal(r.latency?.maxUs, 2 * 1700.912);
  assert.equal(r.latency?.percentiles.find((p) => p.percentile === 50)?.valueUs, 2 * 38.259);
  const h = LatencyHistogram.fromProto(r.histogram!);
  assert.equal(h.min, 2 * 3.156);
  assert.ok(near(h.percentile(99), 2 * 62.46, 0.01));
});

test('a 1024-byte message run parses like the 14-byte one', () => {
  const r = parseSockperfPingPong(fixture('sockperf-pp-rtt-m1024.txt'));
  assert.equal(r.transactions, 21111);
  assert.equal(r.seconds, 1.55);
  assert.equal(r.latency?.meanUs, 73.331);
});

test("refused, peer closed and bad arguments are E_TOOL_FAILED with sockperf's words (sockperf exits 0 or 7)", () => {
  const cases: Array<[string, RegExp]> = [
    ['sockperf-refused.txt', /^sockperf: ERROR: Can`t connect socket \(errno=111 Connection refused\)$/],
    ['sockperf-server-killed.txt', /^sockperf: ERROR: A connection was forcibly closed by a peer/],
    ['sockperf-bad-msgsize.txt', /^sockperf: '-m' Invalid message size: 10 \(min: 14\)$/],
  ];
  for (const [name, re] of cases) {
    assert.throws(
      () => parseSockperfPingPong(fixture(name)),
      (err) => isCniBenchError(err, 'E_TOOL_FAILED') && re.test(err.message),
      name,
    );
  }
});

test('truncated and empty output are parse errors naming sockperf', () => {
  for (const text of [fixture('sockperf-truncated.txt'), '']) {
    assert.throws(
      () => parseSockperfPingPong(text),
      (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('sockperf: cannot parse output'),
    );
  }
});

test('percentiles that go down are refused rather than turned into a histogram', () => {
  const text = fixture('sockperf-pp-rtt.txt').replace('percentile 90.000 =   93.798', 'percentile 90.000 =   13.798');
  assert.throws(
    () => parseSockperfPingPong(text),
    (err) => isCniBenchError(err, 'E_PARSE') && /not ascending/.test(err.message),
  );
});

test("client arguments: round trips, whole seconds, at least sockperf's 14-byte message", () => {
  assert.deepEqual(sockperf.buildClientArgs({ targetHost: '198.18.200.2', targetPort: 11111, durationSeconds: 2.5 }), [
    'ping-pong',
    '--tcp',
    '-i',
    '198.18.200.2',
    '-p',
    '11111',
    '-t',
    '3',
    '-m',
    '14',
    '--full-rtt',
  ]);
  const spec = { targetHost: 'h', targetPort: 1, durationSeconds: 1, requestBytes: 1024, responseBytes: 1024 };
  assert.deepEqual(sockperf.buildClientArgs(spec).slice(-3), ['-m', '1024', '--full-rtt']);
  assert.deepEqual(sockperf.buildServerArgs({ port: 11111 }), ['server', '--tcp', '-i', '0.0.0.0', '-p', '11111']);
});

test('what sockperf cannot do is a validation error naming the field', () => {
  const base = { targetHost: 'h', targetPort: 1, durationSeconds: 1 };
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ connectPerTransaction: true }, 'connectPerTransaction'],
    [{ connections: 4 }, 'connections'],
    [{ requestBytes: 100, responseBytes: 200 }, 'responseBytes'],
    [{ requestBytes: 70000 }, 'requestBytes'],
  ];
  for (const [extra, field] of cases) {
    assert.throws(
      () => sockperf.buildClientArgs({ ...base, ...extra }),
      (err) => isCniBenchError(err, 'E_VALIDATION') && err.message.includes(field),
      field,
    );
  }
});

test('parse wraps the result as an rr measurement', () => {
  const m = sockperf.parse(fixture('sockperf-pp-rtt.txt'), { targetHost: 'h', targetPort: 1, durationSeconds: 3 });
  assert.equal(m.kind?.$case, 'rr');
});
