/**
 * Entry point of the built-in TCP request/response client (netperf TCP_RR and
 * TCP_CRR semantics) against agent/builtins/tcp-echo.ts. It runs as its own
 * process so the agent's event loop is not in the measurement.
 *
 * `--connections` independent closed-loop workers each repeat one transaction
 * at a time until `--duration` ends:
 * - RR: on one kept connection, send the request, wait for the whole response.
 * - CRR (`--crr`): connect, send the request, read the whole response, shut
 *   down our side and wait for the server's close (EOF), as netperf TCP_CRR
 *   does; the time covers connect to EOF.
 * Each transaction's round trip (process.hrtime) goes into a LatencyHistogram.
 * Errors are counted by code (ECONNREFUSED, EADDRNOTAVAIL, ETIMEDOUT for
 * `--timeout-ms` without progress, EPROTO for too many bytes, EOF when the
 * server closes before the whole response); the worker waits 10 ms and goes on, on
 * a new connection. Transactions still in flight when the time is up are
 * dropped, counted neither as transactions nor as errors.
 *
 * Prints ONE JSON object on stdout at the end (parsed by parseTcpRrOutput in
 * agent/drivers/tcp-rr.ts); exits 1 with `{"tool":"tcp-rr","error":...}` if no
 * worker ever connected, 2 on bad arguments.
 */
import { connect, type Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { LatencyHistogram } from '../../core/histogram.js';
import { Histogram } from '../../gen/cnibench/v1/agent.js';
import { durationFlag, failWith, intFlag } from './cli-args.js';
import { encodeRrPreamble, RR_MAX_MESSAGE_BYTES } from './tcp-rr-wire.js';

const ERROR_BACKOFF_MS = 10;

interface Options {
  host: string;
  port: number;
  seconds: number;
  connections: number;
  crr: boolean;
  requestBytes: number;
  responseBytes: number;
  timeoutMs: number;
}

const TOOL = 'tcp-rr';

function options(): Options {
  const { values: v } = parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string' },
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '1' },
      crr: { type: 'boolean', default: false },
      'request-bytes': { type: 'string', default: '1' },
      'response-bytes': { type: 'string', default: '1' },
      'timeout-ms': { type: 'string', default: '5000' },
    },
  });
  const int = (name: string, text: string | undefined, min: number, max: number): number =>
    intFlag(TOOL, name, text, min, max);
  const seconds = durationFlag(TOOL, v.duration);
  return {
    host: v.host,
    port: int('port', v.port, 1, 65535),
    seconds,
    connections: int('connections', v.connections, 1, 10_000),
    crr: v.crr,
    requestBytes: int('request-bytes', v['request-bytes'], 1, RR_MAX_MESSAGE_BYTES),
    responseBytes: int('response-bytes', v['response-bytes'], 1, RR_MAX_MESSAGE_BYTES),
    timeoutMs: int('timeout-ms', v['timeout-ms'], 1, 3_600_000),
  };
}

const o = options();
const hist = new LatencyHistogram();
const errorsByCode: Record<string, number> = {};
const live = new Set<Socket>();
const request = Buffer.alloc(o.requestBytes, 0x71);
const first = Buffer.concat([
  encodeRrPreamble({ requestBytes: o.requestBytes, responseBytes: o.responseBytes, closeAfterResponse: o.crr }),
  request,
]);
let running = true;
let everConnected = false;
// Welford's running mean and variance, exact beside the bucketed histogram.
let n = 0;
let mean = 0;
let m2 = 0;

function record(startNs: bigint): void {
  const us = Number(process.hrtime.bigint() - startNs) / 1000;
  hist.record(us);
  n++;
  const d = us - mean;
  mean += d / n;
  m2 += d * (us - mean);
}

function countError(code: string): void {
  if (running) errorsByCode[code] = (errorsByCode[code] ?? 0) + 1;
}

interface Conn {
  socket: Socket;
  /** Counts the error (once per connection) and destroys the socket. */
  fail(code: string): void;
}

interface Handlers {
  connected(c: Conn): void;
  data(c: Conn, bytes: number): void;
  end(c: Conn): void;
  /** Called once the socket is gone, for whatever reason. */
  closed(failed: boolean): void;
}

function open(h: Handlers): void {
  const socket = connect({ host: o.host, port: o.port, noDelay: true, timeout: o.timeoutMs });
  live.add(socket);
  let failed = false;
  const c: Conn = {
    socket,
    fail(code: string): void {
      if (failed) return;
      failed = true;
      countError(code);
      socket.destroy();
    },
  };
  socket.on('connect', () => {
    everConnected = true;
    h.connected(c);
  });
  socket.on('data', (chunk: Buffer) => h.data(c, chunk.length));
  socket.on('end', () => h.end(c));
  socket.on('timeout', () => c.fail('ETIMEDOUT'));
  socket.on('error', (err: NodeJS.ErrnoException) => c.fail(err.code ?? 'EUNKNOWN'));
  socket.on('close', () => {
    live.delete(socket);
    h.closed(failed);
  });
}

function again(next: () => void, backOff: boolean): void {
  if (!running) return;
  if (backOff) setTimeout(next, ERROR_BACKOFF_MS);
  else setImmediate(next);
}

/** TCP_RR: one kept connection, transactions back to back; a lost connection is replaced after the back-off. */
function rrWorker(): void {
  let got = 0;
  let start = 0n;
  const send = (c: Conn, buf: Buffer): void => {
    got = 0;
    start = process.hrtime.bigint();
    c.socket.write(buf);
  };
  open({
    connected: (c) => send(c, first),
    data(c, bytes) {
      got += bytes;
      if (got > o.responseBytes) return c.fail('EPROTO');
      if (got < o.responseBytes) return;
      record(start);
      if (running) send(c, request);
    },
    end: (c) => c.fail('EOF'),
    closed: () => again(rrWorker, true),
  });
}

/** TCP_CRR: connect, request, response, our FIN, the server's EOF; then the next one. */
function crrWorker(): void {
  let got = 0;
  const start = process.hrtime.bigint();
  open({
    connected: (c) => c.socket.write(first),
    data(c, bytes) {
      got += bytes;
      if (got > o.responseBytes) return c.fail('EPROTO');
      if (got === o.responseBytes) c.socket.end();
    },
    end(c) {
      if (got !== o.responseBytes) return c.fail('EOF');
      if (running) record(start);
      c.socket.destroy();
    },
    closed: (failed) => again(crrWorker, failed),
  });
}

const began = process.hrtime.bigint();
for (let i = 0; i < o.connections; i++) (o.crr ? crrWorker : rrWorker)();

setTimeout(() => {
  running = false;
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  for (const s of live) s.destroy();
  if (!everConnected) failWith(TOOL, 1, `never connected to ${o.host}:${o.port}`, { errorsByCode });
  const errors = Object.values(errorsByCode).reduce((a, b) => a + b, 0);
  const out = {
    tool: 'tcp-rr',
    connectPerTransaction: o.crr,
    connections: o.connections,
    requestBytes: o.requestBytes,
    responseBytes: o.responseBytes,
    seconds,
    transactions: n,
    errors,
    errorsByCode,
    meanUs: n > 0 ? mean : 0,
    stdevUs: n > 1 ? Math.sqrt(m2 / (n - 1)) : 0,
    histogram: Histogram.toJSON(hist.toProto()),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0));
}, o.seconds * 1000);
