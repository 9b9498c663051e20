import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeRrPreamble, encodeRrPreamble, RR_PREAMBLE_BYTES } from '../../../../agent/builtins/tcp-rr-wire.js';
import { tcpEcho } from '../../../../agent/drivers/tcp-echo.js';
import { parseTcpRrOutput, tcpRr } from '../../../../agent/drivers/tcp-rr.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { LatencyHistogram } from '../../../../core/histogram.js';
import { run } from '../../../../core/process.js';
import { fixture } from '../../../support/helpers/fixtures.js';
import { type Proc, startNode, stop, waitFor } from '../../../support/helpers/procs.js';

test('captured RR run: counts, exact mean, percentiles from the histogram', () => {
  const r = parseTcpRrOutput(fixture('tcp-rr-rr.json'));
  assert.equal(r.connectPerTransaction, false);
  assert.equal(r.connections, 1);
  assert.equal(r.transactions, 46186);
  assert.equal(r.seconds, 2.003586918);
  assert.equal(r.transactionsPerSecond, 46186 / 2.003586918);
  assert.equal(r.errors, 0);
  assert.equal(r.latency?.meanUs, 42.69008781881985);
  assert.equal(r.latency?.maxUs, 12238.746);
  const h = LatencyHistogram.fromProto(r.histogram!);
  assert.equal(h.total, 46186);
  assert.equal(h.min, 13.515);
  assert.deepEqual(
    r.latency?.percentiles.map((p) => p.percentile),
    [50, 90, 99, 99.9],
  );
  assert.deepEqual(
    r.latency?.percentiles.map((p) => p.valueUs),
    [50, 90, 99, 99.9].map((p) => h.percentile(p)),
  );
  const values = r.latency!.percentiles.map((p) => p.valueUs);
  assert.ok(
    values.every((v, i) => i === 0 || v >= values[i - 1]!) && values[0]! > 13.515 && values[3]! < 12238.746,
    String(values),
  );
});

test('captured CRR runs: connection per transaction, errors counted by code', () => {
  const crr = parseTcpRrOutput(fixture('tcp-rr-crr.json'));
  assert.equal(crr.connectPerTransaction, true);
  assert.equal(crr.connections, 4);
  assert.equal(crr.transactions, 5318);
  const killed = parseTcpRrOutput(fixture('tcp-rr-crr-server-killed.json'));
  assert.equal(killed.transactions, 4243);
  assert.equal(killed.errors, 70);
});

test("never connected is E_TOOL_FAILED with the client's words; truncated or inconsistent JSON is E_PARSE", () => {
  assert.throws(
    () => parseTcpRrOutput(fixture('tcp-rr-refused.json')),
    (err) =>
      isCniBenchError(err, 'E_TOOL_FAILED') && /^tcp-rr: never connected to 198\.18\.200\.2:12899$/.test(err.message),
  );
  const rr = JSON.parse(fixture('tcp-rr-rr.json'));
  const bad = [
    fixture('tcp-rr-truncated.json'),
    '',
    JSON.stringify({ ...rr, tool: 'wrk' }),
    JSON.stringify({ ...rr, transactions: rr.transactions + 1 }),
    JSON.stringify({ ...rr, errors: 3 }),
    JSON.stringify({ ...rr, histogram: { ...rr.histogram, total: 1 } }),
    JSON.stringify({ ...rr, meanUs: 'fast' }),
  ];
  for (const text of bad) {
    assert.throws(
      () => parseTcpRrOutput(text),
      (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('tcp-rr: cannot parse output'),
      text.slice(0, 80),
    );
  }
});

test('a run in which nothing completed is a failure, not a zero', () => {
  const none = {
    tool: 'tcp-rr',
    connectPerTransaction: true,
    connections: 1,
    seconds: 1,
    transactions: 0,
    errors: 5,
    errorsByCode: { ECONNREFUSED: 5 },
    meanUs: 0,
    stdevUs: 0,
    histogram: { subBucketBits: 7 },
  };
  assert.throws(
    () => parseTcpRrOutput(JSON.stringify(none)),
    (err) => isCniBenchError(err, 'E_TOOL_FAILED') && /ECONNREFUSED/.test(err.message),
  );
});

test('preamble round-trips and refuses foreign bytes', () => {
  const p = { requestBytes: 1, responseBytes: 65536, closeAfterResponse: true };
  const b = encodeRrPreamble(p);
  assert.equal(b.length, RR_PREAMBLE_BYTES);
  assert.deepEqual(decodeRrPreamble(b), p);
  assert.throws(() => decodeRrPreamble(Buffer.from('GET / HTTP/1.1\r\n')));
  assert.throws(() => encodeRrPreamble({ ...p, requestBytes: 0 }));
});

test('client arguments carry sizes and the CRR switch; the server gets its port', () => {
  const args = tcpRr.buildClientArgs({
    targetHost: '198.18.200.2',
    targetPort: 12865,
    durationSeconds: 1.5,
    connections: 4,
    connectPerTransaction: true,
    requestBytes: 100,
    responseBytes: 2000,
  } as never);
  assert.match(args[0]!, /agent\/builtins\/tcp-rr\.js$/);
  assert.deepEqual(args.slice(1), [
    '--host',
    '198.18.200.2',
    '--port',
    '12865',
    '--duration',
    '1.5',
    '--connections',
    '4',
    '--request-bytes',
    '100',
    '--response-bytes',
    '2000',
    '--crr',
  ]);
  assert.ok(!tcpRr.buildClientArgs({ targetHost: 'h', targetPort: 1, durationSeconds: 1 }).includes('--crr'));
  const server = tcpEcho.buildServerArgs({ port: 0 });
  assert.match(server[0]!, /agent\/builtins\/tcp-echo\.js$/);
  assert.deepEqual(server.slice(1), ['--port', '0']);
});

interface EchoStats {
  connections: number;
  transactions: number;
  protocolErrors: number;
}

function events(p: Proc): Array<Record<string, any>> {
  return p
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{"tool":"tcp-echo"'))
    .map((l) => JSON.parse(l));
}

async function withEcho(fn: (port: number) => Promise<void>): Promise<EchoStats> {
  const [script, ...args] = tcpEcho.buildServerArgs({ port: 0 });
  const server = startNode(script!, [...args, '--host', '127.0.0.1']);
  try {
    const port = await waitFor(
      'tcp-echo to listen',
      () => events(server).find((e) => e.event === 'listening')?.port as number | undefined,
      5000,
      20,
    );
    await fn(port);
  } finally {
    await stop(server);
  }
  const stopped = events(server).find((e) => e.event === 'stopped');
  assert.ok(stopped, `no 'stopped' line from tcp-echo: ${server.output()}`);
  return stopped as EchoStats;
}

async function client(port: number, crr: boolean): Promise<ReturnType<typeof parseTcpRrOutput>> {
  const spec = {
    targetHost: '127.0.0.1',
    targetPort: port,
    durationSeconds: 1,
    connectPerTransaction: crr,
    requestBytes: 64,
    responseBytes: 1024,
  } as never;
  const r = await run(process.execPath, tcpRr.buildClientArgs(spec), {
    okExitCodes: tcpRr.okExitCodes,
    timeoutMs: 15_000,
    tool: 'tcp-rr',
  });
  const m = tcpRr.parse(r.stdout, spec);
  assert.equal(m.kind?.$case, 'rr');
  return (m.kind as { value: ReturnType<typeof parseTcpRrOutput> }).value;
}

test('real tcp-echo and tcp-rr on 127.0.0.1: RR completes transactions on one connection', async () => {
  let result: ReturnType<typeof parseTcpRrOutput> | undefined;
  const stats = await withEcho(async (port) => {
    result = await client(port, false);
  });
  assert.ok(result!.transactions > 0);
  assert.equal(result!.errors, 0);
  assert.equal(stats.connections, 1);
  assert.equal(stats.protocolErrors, 0);
  // The server may have answered the one request that was in flight at the deadline.
  assert.ok(
    stats.transactions - result!.transactions <= 1,
    `server ${stats.transactions} vs client ${result!.transactions}`,
  );
});

test('real tcp-echo and tcp-rr on 127.0.0.1: CRR opens one connection per transaction', async () => {
  let result: ReturnType<typeof parseTcpRrOutput> | undefined;
  const stats = await withEcho(async (port) => {
    result = await client(port, true);
  });
  const r = result!;
  assert.ok(r.transactions > 0);
  assert.equal(r.connectPerTransaction, true);
  assert.equal(stats.protocolErrors, 0);
  // One worker: at most one connection (in flight at the deadline) more than completed transactions, plus any failed ones.
  const extra = stats.connections - r.transactions;
  assert.ok(
    extra >= 0 && extra <= 1 + r.errors,
    `server saw ${stats.connections} connections for ${r.transactions} transactions (${r.errors} errors)`,
  );
});
