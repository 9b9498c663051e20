import assert from 'node:assert/strict';
import { test } from 'node:test';
import { durationToUs, parseWrkOutput, WRK_PERCENTILES_SCRIPT, wrk } from '../../../../agent/drivers/wrk.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { fixture } from '../../../support/helpers/fixtures.js';

test('keep-alive summary, latency and distribution (values read off the fixture)', () => {
  const r = parseWrkOutput(fixture('wrk-keepalive.txt'));
  assert.equal(r.requests, 15485);
  assert.equal(r.seconds, 2.03);
  assert.equal(r.requestsPerSecond, 7639.16);
  assert.equal(r.connections, 16);
  assert.equal(r.non2xx, 0);
  assert.deepEqual(r.latency?.percentiles, [
    { percentile: 50, valueUs: 1520 },
    { percentile: 75, valueUs: 3500 },
    { percentile: 90, valueUs: 6180 },
    { percentile: 99, valueUs: 29610 },
  ]);
  assert.equal(r.latency?.meanUs, 3070);
  assert.equal(r.latency?.maxUs, 70150);
});

test('non-2xx responses and socket errors are counted, not hidden', () => {
  assert.equal(parseWrkOutput(fixture('wrk-non2xx.txt')).non2xx, 23418);
  const se = parseWrkOutput(fixture('wrk-socket-errors.txt'));
  assert.deepEqual(se.socketErrors, { connect: 0, read: 16, write: 35484, timeout: 0 });
  assert.equal(se.requests, 3639);
});

test('short-connection output parses like keep-alive', () => {
  const r = parseWrkOutput(fixture('wrk-short-connection.txt'));
  assert.equal(r.requests, 6244);
  assert.equal(r.requestsPerSecond, 3068.04);
});

test('refused, truncated and empty output are errors naming wrk', () => {
  assert.throws(
    () => parseWrkOutput(fixture('wrk-refused.stderr')),
    (err) =>
      isCniBenchError(err, 'E_TOOL_FAILED') &&
      /wrk: unable to connect to 198\.18\.200\.2:8099 Connection refused/.test(err.message),
  );
  for (const text of [fixture('wrk-truncated.txt'), fixture('wrk-refused.txt')]) {
    assert.throws(
      () => parseWrkOutput(text),
      (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('wrk: cannot parse output'),
    );
  }
});

test('arguments: short connections send Connection: close as one argument; threads never exceed connections', () => {
  assert.deepEqual(
    wrk.buildClientArgs({
      targetHost: '198.19.0.10',
      targetPort: 80,
      durationSeconds: 0.5,
      connections: 1,
      threads: 2,
      keepalive: false,
    }),
    [
      '-t',
      '1',
      '-c',
      '1',
      '-d',
      '1s',
      '--latency',
      '--timeout',
      '5s',
      '-s',
      WRK_PERCENTILES_SCRIPT,
      '-H',
      'Connection: close',
      'http://198.19.0.10:80/',
    ],
  );
  assert.ok(
    !wrk.buildClientArgs({ targetHost: 'h', targetPort: 1, durationSeconds: 1, keepalive: true }).includes('-H'),
  );
});

test('wrk durations convert to microseconds', () => {
  assert.equal(durationToUs('250.00us'), 250);
  assert.equal(durationToUs('1.5s'), 1.5e6);
  assert.throws(() => durationToUs('fast'));
});

test("the Lua percentile block becomes a histogram that agrees with wrk's own distribution", async () => {
  const { LatencyHistogram } = await import('../../../../core/histogram.js');
  const r = parseWrkOutput(fixture('wrk-keepalive-histogram.txt'));
  assert.ok(r.histogram, 'histogram present');
  const h = LatencyHistogram.fromProto(r.histogram);
  assert.equal(h.total, 50134);
  assert.equal(h.min, 50);
  assert.equal(h.max, 103776);
  // wrk printed p50 485us, p90 3.10ms, p99 45.63ms for the same run.
  for (const [p, us] of [
    [50, 485],
    [90, 3100],
    [99, 45630],
  ] as const) {
    const got = h.percentile(p);
    assert.ok(Math.abs(got - us) / us < 0.03, `p${p}: ${got} vs wrk's ${us}`);
  }
  assert.equal(r.latencyFromIntendedStart, false);
});

test('a latency block cut short is a parse error naming wrk, never a partial histogram', () => {
  assert.throws(
    () => parseWrkOutput(fixture('wrk-histogram-truncated.txt')),
    (err: unknown) => isCniBenchError(err, 'E_PARSE') && /^wrk:/.test(err.message),
  );
});

test('wrk runs the percentile script, and the script file ships', async () => {
  const { existsSync } = await import('node:fs');
  const args = wrk.buildClientArgs({ targetHost: '198.18.0.1', targetPort: 80, durationSeconds: 1 });
  assert.equal(args[args.indexOf('-s') + 1], WRK_PERCENTILES_SCRIPT);
  assert.ok(existsSync(WRK_PERCENTILES_SCRIPT), WRK_PERCENTILES_SCRIPT);
});
