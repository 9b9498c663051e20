import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { httpOpenLoop, parseHttpOpenLoopOutput, socketErrorsOf } from '../../../../agent/drivers/http-open-loop.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { LatencyHistogram } from '../../../../core/histogram.js';
import { run } from '../../../../core/process.js';
import { executableOf, findTool } from '../../../../core/tool-catalogue/index.js';
import type { HttpLoadResult } from '../../../../gen/cnibench/v1/agent.js';
import { fixture } from '../../../support/helpers/fixtures.js';

test('captured keep-alive run at 500 QPS: every scheduled request answered, percentiles from the histogram', () => {
  const r = parseHttpOpenLoopOutput(fixture('http-open-loop-keepalive.json'));
  assert.equal(r.connections, 16);
  assert.equal(r.keepalive, true);
  assert.equal(r.seconds, 2);
  assert.equal(r.requests, 1000);
  assert.equal(r.requestsPerSecond, 500);
  assert.equal(r.non2xx, 0);
  assert.deepEqual(r.socketErrors, { connect: 0, read: 0, write: 0, timeout: 0 });
  assert.equal(r.targetQps, 500);
  assert.equal(r.latencyFromIntendedStart, true);
  // The client's own lag against its schedule (its 1 ms timer), carried to the report's dispersion reason.
  assert.ok(r.sendLagMeanUs > 0 && r.sendLagMeanUs < 5000, String(r.sendLagMeanUs));
  assert.equal(r.latency?.meanUs, 2194.861437999997);
  const h = LatencyHistogram.fromProto(r.histogram!);
  assert.equal(h.total, 1000);
  assert.equal(r.latency?.maxUs, h.max);
  assert.deepEqual(
    r.latency?.percentiles.map((p) => p.percentile),
    [50, 90, 99, 99.9],
  );
  assert.deepEqual(
    r.latency?.percentiles.map((p) => p.valueUs),
    [50, 90, 99, 99.9].map((p) => h.percentile(p)),
  );
});

test('captured short-connection and non-2xx runs', () => {
  const short = parseHttpOpenLoopOutput(fixture('http-open-loop-short-connection.json'));
  assert.equal(short.keepalive, false);
  assert.equal(short.requests, 1000);
  const missing = parseHttpOpenLoopOutput(fixture('http-open-loop-non2xx.json'));
  assert.equal(missing.requests, 1000);
  assert.equal(missing.non2xx, 1000);
});

test('refused target is E_TOOL_FAILED naming the code; truncated or inconsistent output is E_PARSE naming the tool', () => {
  assert.throws(
    () => parseHttpOpenLoopOutput(fixture('http-open-loop-refused.json')),
    (err) =>
      isCniBenchError(err, 'E_TOOL_FAILED') &&
      /^http-open-loop: no HTTP response to 500 requests/.test(err.message) &&
      /ECONNREFUSED/.test(err.message),
  );
  const ka = JSON.parse(fixture('http-open-loop-keepalive.json'));
  const bad = [
    fixture('http-open-loop-truncated.json'),
    '',
    JSON.stringify({ ...ka, tool: 'fortio' }),
    JSON.stringify({ ...ka, requests: 999 }),
    JSON.stringify({ ...ka, sent: 1001 }),
    JSON.stringify({ ...ka, errors: 2 }),
    JSON.stringify({ ...ka, non2xx: 1001 }),
    JSON.stringify({ ...ka, keepalive: 'yes' }),
    JSON.stringify({ ...ka, histogram: { ...ka.histogram, total: 1 } }),
    JSON.stringify({ ...ka, meanUs: 'fast' }),
  ];
  for (const text of bad) {
    assert.throws(
      () => parseHttpOpenLoopOutput(text),
      (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('http-open-loop: cannot parse output'),
      text.slice(0, 80),
    );
  }
  assert.throws(
    () => parseHttpOpenLoopOutput('{"tool":"http-open-loop","error":"--qps must be requests per second"}'),
    (err) => isCniBenchError(err, 'E_TOOL_FAILED'),
  );
});

test('error codes land in the connect, write, timeout and read buckets', () => {
  assert.deepEqual(
    socketErrorsOf({
      ECONNREFUSED: 3,
      EADDRNOTAVAIL: 1,
      EPIPE: 2,
      ETIMEDOUT: 4,
      ECONNRESET: 5,
      HPE_INVALID_CONSTANT: 1,
    }),
    { connect: 4, write: 2, timeout: 4, read: 6 },
  );
});

test('arguments carry rate, pool and keep-alive; qps <= 0 is refused naming qps; one thread', () => {
  const spec = {
    targetHost: '198.18.200.2',
    targetPort: 8080,
    durationSeconds: 2,
    connections: 16,
    qps: 500,
    keepalive: false,
    path: 'x',
  };
  const args = httpOpenLoop.buildClientArgs(spec);
  assert.match(args[0]!, /agent\/builtins\/http-open-loop\.js$/);
  assert.deepEqual(args.slice(1), [
    '--host',
    '198.18.200.2',
    '--port',
    '8080',
    '--path',
    '/x',
    '--duration',
    '2',
    '--qps',
    '500',
    '--connections',
    '16',
    '--keepalive',
    'false',
  ]);
  assert.equal(executableOf(findTool(httpOpenLoop.tool)!), process.execPath);
  assert.equal(findTool(httpOpenLoop.tool)?.client?.kind, 'http');
  assert.equal(httpOpenLoop.cpuThreads?.(spec), 1);
  for (const qps of [0, -1, undefined, NaN]) {
    assert.throws(
      () => httpOpenLoop.buildClientArgs({ ...spec, qps }),
      (err) => isCniBenchError(err, 'E_VALIDATION') && /qps/.test(err.message) && err.details.field === 'qps',
    );
  }
});

/**
 * The point of the tool: the server holds every request that arrives in a
 * 300 ms window. Requests due in that window must carry the wait from their
 * intended start (up to 300 ms); a closed-loop tool would time only the few
 * requests its connections had outstanding and then catch up.
 */
test('real client against a server that stalls 300 ms: the stall shows in p90 and p99', async () => {
  const STALL_FROM_MS = 600;
  const STALL_MS = 300;
  let first = 0;
  const answer = (res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 3 });
    res.end('ok\n');
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const now = Date.now();
    first ||= now;
    const stallEnd = first + STALL_FROM_MS + STALL_MS;
    if (now >= first + STALL_FROM_MS && now < stallEnd) setTimeout(() => answer(res), stallEnd - now);
    else answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    const spec = { targetHost: '127.0.0.1', targetPort: port, durationSeconds: 1.5, connections: 4, qps: 200 };
    const out = await run(process.execPath, httpOpenLoop.buildClientArgs(spec), {
      timeoutMs: 15_000,
      tool: httpOpenLoop.tool,
    });
    const m = httpOpenLoop.parse(out.stdout, spec);
    assert.equal(m.kind?.$case, 'http');
    const r = (m.kind as { value: HttpLoadResult }).value;
    const doc = JSON.parse(out.stdout);
    assert.equal(doc.sent, 300);
    assert.ok(Math.abs(r.requests - 300) <= 3, `requests ${r.requests}`);
    const p = Object.fromEntries(r.latency!.percentiles.map((x) => [x.percentile, x.valueUs / 1000]));
    assert.ok(p[99]! >= 200, `p99 ${p[99]} ms should carry the 300 ms stall`);
    // About 60 of 300 requests were due during the stall; the older half of them waited >= 150 ms.
    assert.ok(p[90]! >= 100, `p90 ${p[90]} ms: the stall must hit every request due during it, not a few`);
    assert.ok(p[50]! < 50, `p50 ${p[50]} ms: outside the stall the server answers at once`);
    assert.ok(r.latency!.maxUs / 1000 < STALL_MS + 100, `max ${r.latency!.maxUs / 1000} ms`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
