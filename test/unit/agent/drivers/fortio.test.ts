import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fortio, parseFortioHttpJson } from '../../../../agent/drivers/fortio.js';
import { fortioBucketsToHistogram } from '../../../../agent/drivers/fortio-load.js';
import { fortioTcp, parseFortioTcpJson } from '../../../../agent/drivers/fortio-tcp.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { LatencyHistogram } from '../../../../core/histogram.js';
import { binaryOf } from '../../../../core/tool-catalogue/index.js';
import { fixture } from '../../../support/helpers/fixtures.js';

function close(actual: number | undefined, expected: number, rel = 1e-9): void {
  assert.ok(
    actual !== undefined && Math.abs(actual - expected) <= Math.abs(expected) * rel,
    `${actual} is not ~${expected}`,
  );
}

test('keep-alive at max rate: counts, rate and latency read off the capture', () => {
  const r = parseFortioHttpJson(fixture('fortio-keepalive.json'));
  assert.equal(r.requests, 49293);
  assert.equal(r.connections, 16);
  assert.equal(r.keepalive, true);
  close(r.seconds, 2.000634479);
  close(r.requestsPerSecond, 24638.683636322556); // fortio's ActualQPS: no socket errors, so the same
  assert.equal(r.non2xx, 0);
  assert.deepEqual(r.socketErrors, { connect: 0, read: 0, write: 0, timeout: 0 });
  assert.equal(r.targetQps, 0);
  assert.equal(r.latencyFromIntendedStart, false);
  close(r.latency?.meanUs, 648.6123028827622);
  close(r.latency?.stdevUs, 2112.5514111502703);
  close(r.latency?.maxUs, 39240.609);
  assert.deepEqual(
    r.latency?.percentiles.map((p) => p.percentile),
    [50, 75, 90, 99, 99.9],
  );
  close(r.latency?.percentiles[0]?.valueUs, 156.79285714285712);
  close(r.latency?.percentiles[4]?.valueUs, 27798.951612903355);
});

test("the histogram keeps every request and lands near fortio's own percentiles", () => {
  const r = parseFortioHttpJson(fixture('fortio-keepalive.json'));
  const h = LatencyHistogram.fromProto(r.histogram!);
  assert.equal(h.total, 49293);
  close(h.min, 15.814, 1e-6);
  close(h.max, 39240.609, 1e-6);
  // fortio interpolates inside its (10 µs .. 20%-wide) buckets; ours spreads them evenly, so agree within a bucket.
  for (const p of r.latency!.percentiles) {
    const ours = h.percentile(p.percentile);
    assert.ok(
      Math.abs(ours - p.valueUs) <= p.valueUs * 0.2 + 10,
      `p${p.percentile}: ours ${ours} vs fortio ${p.valueUs}`,
    );
  }
});

test('short connections: one connection per request (SocketCount = requests + warm-up)', () => {
  const text = fixture('fortio-short-connection.json');
  const r = parseFortioHttpJson(text);
  assert.equal(r.keepalive, false);
  assert.equal(r.requests, 14996);
  close(r.requestsPerSecond, 7492.954270819369);
  assert.equal(JSON.parse(text).SocketCount, 14996 + 16);
});

test('fixed 1000 QPS: the asked rate is kept beside the achieved one', () => {
  const r = parseFortioHttpJson(fixture('fortio-qps1000.json'));
  assert.equal(r.targetQps, 1000);
  assert.equal(r.requests, 2000);
  close(r.seconds, 2.01579757);
  close(r.requestsPerSecond, 992.1631168550322);
  assert.equal(r.latencyFromIntendedStart, false);
  assert.equal(r.histogram?.total, 2000);
});

test('503 answers are non-2xx and still a measurement', () => {
  const r = parseFortioHttpJson(fixture('fortio-non2xx.json'));
  assert.equal(r.non2xx, 21646);
  assert.equal(r.requests, 21646);
  assert.equal(r.socketErrors?.connect, 0);
});

test('a refused target is E_TOOL_FAILED, never a fast run', () => {
  assert.throws(
    () => parseFortioHttpJson(fixture('fortio-refused.json')),
    (err) =>
      isCniBenchError(err, 'E_TOOL_FAILED') &&
      /^fortio: no HTTP response in 37084 attempts \(37084 socket errors/.test(err.message),
  );
  assert.throws(
    () => parseFortioTcpJson(fixture('fortio-tcp-refused.json')),
    (err) =>
      isCniBenchError(err, 'E_TOOL_FAILED') &&
      err.message.startsWith('fortio-tcp: no transaction succeeded in 56961 attempts') &&
      /connection refused/.test(err.message),
  );
});

test("truncated JSON, fortio's text report and empty output are E_PARSE naming the tool with a sample", () => {
  for (const text of [
    fixture('fortio-truncated.json'),
    fixture('fortio-keepalive-stderr.txt'),
    '',
    '{"RunType":"HTTP"}',
  ]) {
    assert.throws(
      () => parseFortioHttpJson(text),
      (err) =>
        isCniBenchError(err, 'E_PARSE') &&
        err.message.startsWith('fortio: cannot parse output') &&
        'sample' in err.details,
    );
  }
  assert.throws(
    () => parseFortioTcpJson(fixture('fortio-truncated.json')),
    (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('fortio-tcp: cannot parse output'),
  );
  // An HTTP report handed to the TCP parser is not silently read as TCP_RR.
  assert.throws(
    () => parseFortioTcpJson(fixture('fortio-keepalive.json')),
    (err) => isCniBenchError(err, 'E_PARSE') && /RunType is "HTTP"/.test(err.message),
  );
});

test('TCP_RR against tcp-echo', () => {
  const m = fortioTcp.parse(fixture('fortio-tcp-rr.json'), { targetHost: 'h', targetPort: 1, durationSeconds: 2 });
  assert.equal(m.kind?.$case, 'rr');
  const r = parseFortioTcpJson(fixture('fortio-tcp-rr.json'));
  assert.equal(r.connectPerTransaction, false);
  assert.equal(r.connections, 4);
  assert.equal(r.transactions, 98626);
  assert.equal(r.errors, 0);
  close(r.transactionsPerSecond, 49309.36343444671);
  close(r.latency?.percentiles[0]?.valueUs, 59.63137591084442);
  assert.equal(r.histogram?.total, 98626);
});

test('fortio cannot do TCP_CRR: -keepalive=false on tcp:// still used one socket per connection', () => {
  const doc = JSON.parse(fixture('fortio-tcp-keepalive-false.json'));
  assert.equal(doc.SocketCount, 4);
  assert.equal(parseFortioTcpJson(fixture('fortio-tcp-keepalive-false.json')).transactions, 105251);
  assert.throws(
    () => fortioTcp.buildClientArgs({ targetHost: 'h', targetPort: 1, durationSeconds: 1, keepalive: false }),
    (err) => isCniBenchError(err, 'E_VALIDATION') && /TCP_CRR/.test(err.message),
  );
});

test('client arguments: max rate is -qps -1, fixed rate adds -uniform, short connections -keepalive=false', () => {
  assert.deepEqual(
    fortio.buildClientArgs({
      targetHost: '198.19.0.10',
      targetPort: 80,
      durationSeconds: 0.5,
      connections: 16,
      keepalive: false,
    }),
    [
      'load',
      '-json',
      '-',
      '-c',
      '16',
      '-t',
      '1s',
      '-qps',
      '-1',
      '-r',
      '0.00001',
      '-p',
      '50,75,90,99,99.9',
      '-timeout',
      '5s',
      '-allow-initial-errors',
      '-log-errors=false',
      '-loglevel',
      'Critical',
      '-keepalive=false',
      'http://198.19.0.10:80/',
    ],
  );
  const fixed = fortio.buildClientArgs({
    targetHost: 'h',
    targetPort: 8080,
    durationSeconds: 2,
    path: 'x',
    qps: 1000,
  } as never);
  assert.deepEqual(fixed.slice(7, 10), ['-qps', '1000', '-uniform']);
  assert.equal(fixed.at(-1), 'http://h:8080/x');
  assert.ok(!fixed.includes('-keepalive=false'));
  assert.equal(
    fortioTcp.buildClientArgs({ targetHost: 'h', targetPort: 8078, durationSeconds: 2 }).at(-1),
    'tcp://h:8078',
  );
  assert.throws(
    () => fortio.buildClientArgs({ targetHost: 'h', targetPort: 1, durationSeconds: 1, qps: -5 } as never),
    (err) => isCniBenchError(err, 'E_VALIDATION'),
  );
});

test('server arguments open only the one port', () => {
  assert.deepEqual(fortio.buildServerArgs({ port: 8080 }), [
    'server',
    '-http-port',
    '8080',
    '-grpc-port',
    'disabled',
    '-redirect-port',
    'disabled',
    '-tcp-port',
    'disabled',
    '-udp-port',
    'disabled',
    '-ui-path=',
    '-echo-debug-path=',
  ]);
  assert.deepEqual(fortioTcp.buildServerArgs({ port: 8078 }), ['tcp-echo', '-tcp-port', '8078']);
  assert.equal(binaryOf(fortioTcp.tool), 'fortio');
  assert.equal(fortioTcp.tool, 'fortio-tcp');
});

test('bucket conversion refuses malformed buckets', () => {
  assert.equal(fortioBucketsToHistogram([]).total, 0);
  assert.throws(() => fortioBucketsToHistogram([{ Start: 0.001, End: 0.002 }]), /Data\[0\]/);
  assert.throws(() => fortioBucketsToHistogram({}), /not an array/);
});
