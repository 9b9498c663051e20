import assert from 'node:assert/strict';
import { test } from 'node:test';
import { iperf3, parseIperf3Json } from '../../../../agent/drivers/iperf3.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { fixture } from '../../../support/helpers/fixtures.js';

test('one stream: receiver rate, bytes and retransmits from the real -J output', () => {
  const r = parseIperf3Json(fixture('iperf3-client-p1.json'));
  const doc = JSON.parse(fixture('iperf3-client-p1.json'));
  assert.equal(r.streams, 1);
  assert.equal(r.protocol, 'tcp');
  assert.equal(r.bitsPerSecond, doc.end.sum_received.bits_per_second);
  assert.equal(r.senderBitsPerSecond, doc.end.sum_sent.bits_per_second);
  assert.equal(r.retransmits, doc.end.sum_sent.retransmits);
  assert.equal(r.bytes, doc.end.sum_received.bytes);
  assert.ok(r.bitsPerSecond > 1e8 && r.seconds > 1.9 && r.seconds < 2.2, JSON.stringify(r));
});

test('eight streams are summed by iperf3 itself, not by us', () => {
  const r = parseIperf3Json(fixture('iperf3-client-p8.json'));
  const doc = JSON.parse(fixture('iperf3-client-p8.json'));
  assert.equal(r.streams, 8);
  const perStream = doc.end.streams.reduce((n: number, s: any) => n + s.receiver.bytes, 0);
  assert.equal(r.bytes, perStream);
});

test("connection refused is iperf3's own error, coded as a tool failure", () => {
  assert.throws(
    () => parseIperf3Json(fixture('iperf3-client-refused.json')),
    (err) =>
      isCniBenchError(err, 'E_TOOL_FAILED') &&
      err.message === 'iperf3: unable to connect to server: Connection refused',
  );
});

test('truncated and empty output are parse errors naming iperf3 with a sample', () => {
  for (const text of [fixture('iperf3-client-truncated.json'), '', '{"start":{}}']) {
    assert.throws(
      () => parseIperf3Json(text),
      (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('iperf3: cannot parse output'),
    );
  }
});

test('client and server arguments', () => {
  assert.deepEqual(
    iperf3.buildClientArgs({ targetHost: '198.18.16.10', targetPort: 5201, durationSeconds: 2.5, streams: 8 }),
    ['-c', '198.18.16.10', '-p', '5201', '-t', '3', '-P', '8', '-J', '--connect-timeout', '3000'],
  );
  assert.deepEqual(iperf3.buildServerArgs({ port: 5201 }), ['-s', '-p', '5201']);
});

test('UDP: receiver rate, jitter and loss come from the real capture; -b is per stream', () => {
  const t = parseIperf3Json(fixture('iperf3-client-udp.json'));
  assert.equal(t.protocol, 'udp');
  assert.ok(Math.abs(t.bitsPerSecond - 499566714.41) < 1, String(t.bitsPerSecond));
  assert.equal(t.lostPackets, 35);
  assert.equal(t.packets, 86295);
  assert.ok(t.jitterMs > 0 && t.jitterMs < 1);
  assert.equal(t.targetBitsPerSecond, 500e6);
  const over = parseIperf3Json(fixture('iperf3-client-udp-overload.json'));
  assert.equal(over.lostPackets, 26489);
  assert.equal(over.targetBitsPerSecond, 2 * 20e9);
  const args = iperf3.buildClientArgs({
    targetHost: '198.18.0.1',
    targetPort: 5201,
    durationSeconds: 2,
    streams: 2,
    protocol: 'udp',
    targetBitsPerSecond: 1e9,
  });
  assert.deepEqual(args.slice(args.indexOf('-u'), args.indexOf('-u') + 3), ['-u', '-b', '500000000']);
});
