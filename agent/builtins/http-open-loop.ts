/**
 * Entry point of the built-in fixed-rate (open-loop) HTTP load generator. It
 * exists because fortio and wrk time each request from when it was really sent
 * and then catch up after a stall, so a server that stops answering for 300 ms
 * shows up as one slow request instead of 300 ms of lost service (coordinated
 * omission). Here request i is due at t0 + i/qps whatever happened before, and
 * its latency is response end minus that INTENDED start, as wrk2 does: every
 * request that should have gone out during a stall carries the stall.
 *
 * A 1 ms timer sends every request whose time has come without waiting for
 * answers. node:http's Agent (maxSockets = `--connections`, keep-alive unless
 * `--keepalive false`, which sends `Connection: close`) queues what the pool
 * cannot take yet; queued requests are still timed from their intended start.
 * Responses of any status are latency samples; non-2xx are also counted.
 * Transport errors are counted by code and are not samples. After the
 * schedule ends the client waits at most 2 s for requests in flight; the rest
 * count as ETIMEDOUT. `sendLagMeanUs`/`sendLagMaxUs` say how late requests
 * left against the schedule (timer wake-ups, a busy event loop); that lag is
 * inside every latency, as it would be for a real client arriving on time.
 *
 * Prints ONE JSON object on stdout (parsed by parseHttpOpenLoopOutput in
 * agent/drivers/http-open-loop.ts); exits 2 with `{"tool":...,"error":...}` on
 * bad arguments. Runs as its own process so the agent's event loop is not in
 * the measurement.
 */
import { Agent, type ClientRequest, request } from 'node:http';
import { parseArgs } from 'node:util';
import { LatencyHistogram } from '../../core/histogram.js';
import { Histogram } from '../../gen/cnibench/v1/agent.js';
import { durationFlag, failWith, intFlag } from './cli-args.js';

const TOOL = 'http-open-loop';
const TICK_MS = 1;
const DRAIN_MS = 2000;

interface Options {
  host: string;
  port: number;
  path: string;
  seconds: number;
  qps: number;
  connections: number;
  keepalive: boolean;
}

const fail = (code: number, error: string): never => failWith(TOOL, code, error);

function options(): Options {
  const { values: v } = parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string' },
      path: { type: 'string', default: '/' },
      duration: { type: 'string', default: '10' },
      qps: { type: 'string' },
      connections: { type: 'string', default: '64' },
      keepalive: { type: 'string', default: 'true' },
    },
  });
  const port = intFlag(TOOL, 'port', v.port, 1, 65535);
  const connections = intFlag(TOOL, 'connections', v.connections, 1, 100_000);
  const seconds = durationFlag(TOOL, v.duration);
  const qps = Number(v.qps);
  if (!(qps > 0 && qps <= 10_000_000))
    fail(2, `--qps must be requests per second in (0, 10000000], got '${v.qps ?? ''}'`);
  if (v.keepalive !== 'true' && v.keepalive !== 'false')
    fail(2, `--keepalive must be true or false, got '${v.keepalive}'`);
  if (!v.path.startsWith('/')) fail(2, `--path must start with '/', got '${v.path}'`);
  return { host: v.host, port, path: v.path, seconds, qps, connections, keepalive: v.keepalive === 'true' };
}

const o = options();
const agent = new Agent({ keepAlive: o.keepalive, maxSockets: o.connections });
const headers = o.keepalive ? {} : { connection: 'close' };
const hist = new LatencyHistogram();
const errorsByCode: Record<string, number> = {};
const inFlight = new Set<ClientRequest>();
const total = Math.floor(o.seconds * o.qps);
let running = true;
let sent = 0;
let completed = 0;
let non2xx = 0;
// Welford's running mean and variance, exact beside the bucketed histogram.
let mean = 0;
let m2 = 0;
// How late requests left against their schedule (timer wake-up, a busy loop): part of every latency.
let lagSumUs = 0;
let lagMaxUs = 0;

function countError(code: string, n = 1): void {
  errorsByCode[code] = (errorsByCode[code] ?? 0) + n;
}

function record(intendedNs: bigint, status: number): void {
  const us = Number(process.hrtime.bigint() - intendedNs) / 1000;
  hist.record(us);
  completed++;
  if (status < 200 || status > 299) non2xx++;
  const d = us - mean;
  mean += d / completed;
  m2 += d * (us - mean);
}

/** One request due at `intendedNs`; settles exactly once, as a sample or an error. */
function send(intendedNs: bigint): void {
  sent++;
  const lagUs = Number(process.hrtime.bigint() - intendedNs) / 1000;
  lagSumUs += lagUs;
  if (lagUs > lagMaxUs) lagMaxUs = lagUs;
  let settled = false;
  const settle = (fn: () => void): void => {
    if (settled || !running) return;
    settled = true;
    inFlight.delete(req);
    fn();
  };
  const req = request({ host: o.host, port: o.port, path: o.path, method: 'GET', agent, headers }, (res) => {
    res.on('end', () => settle(() => record(intendedNs, res.statusCode ?? 0)));
    res.on('error', (err: NodeJS.ErrnoException) => settle(() => countError(err.code ?? 'EUNKNOWN')));
    res.resume();
  });
  req.on('error', (err: NodeJS.ErrnoException) => settle(() => countError(err.code ?? 'EUNKNOWN')));
  inFlight.add(req);
  req.end();
}

const t0 = process.hrtime.bigint();
const intervalNs = 1e9 / o.qps;
const intended = (i: number): bigint => t0 + BigInt(Math.round(i * intervalNs));

function finish(): void {
  running = false;
  const seconds = o.seconds;
  countError('ETIMEDOUT', inFlight.size);
  if (errorsByCode.ETIMEDOUT === 0) delete errorsByCode.ETIMEDOUT;
  for (const req of inFlight) req.destroy();
  agent.destroy();
  const errors = Object.values(errorsByCode).reduce((a, b) => a + b, 0);
  const out = {
    tool: TOOL,
    qps: o.qps,
    connections: o.connections,
    keepalive: o.keepalive,
    seconds,
    requests: completed,
    sent,
    non2xx,
    errors,
    errorsByCode,
    achievedQps: completed / seconds,
    meanUs: completed > 0 ? mean : 0,
    stdevUs: completed > 1 ? Math.sqrt(m2 / (completed - 1)) : 0,
    sendLagMeanUs: sent > 0 ? lagSumUs / sent : 0,
    sendLagMaxUs: lagMaxUs,
    histogram: Histogram.toJSON(hist.toProto()),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0));
}

/** After the schedule: poll until nothing is in flight or the drain time is up. */
function drain(deadlineNs: bigint): void {
  if (inFlight.size === 0 || process.hrtime.bigint() >= deadlineNs) return finish();
  setTimeout(() => drain(deadlineNs), TICK_MS);
}

function tick(): void {
  const now = process.hrtime.bigint();
  while (sent < total && intended(sent) <= now) send(intended(sent));
  if (sent < total) {
    setTimeout(tick, TICK_MS);
    return;
  }
  const end = t0 + BigInt(Math.round(o.seconds * 1e9));
  drain((end > now ? end : now) + BigInt(DRAIN_MS) * 1_000_000n);
}

tick();
