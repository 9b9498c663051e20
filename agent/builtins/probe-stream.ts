/**
 * Entry point of the built-in disruption probe: a steady, open-loop stream
 * against agent/builtins/tcp-echo.ts (usually through a Service) while
 * something happens to the dataplane. Every `1/rate` s, on a fixed schedule
 * that never waits for answers:
 * - "new": a new connection, one request, the response, our FIN and the
 *   server's EOF (TCP_CRR), failed after `--timeout-ms`;
 * - "kept": one request on the next of `--kept` long-lived connections
 *   (requests may queue on a slow one; each answer is matched in order). A
 *   kept connection that breaks fails everything outstanding on it with the
 *   reason and is reopened on the next tick (a new connection, counted as such
 *   by the reason of the break).
 * Latency counts from each attempt's intended start (no coordinated omission).
 * At the end it waits up to `--timeout-ms` for attempts in flight, then prints
 * ONE JSON line: the timeline in `--bin-ms` bins (report/disruption.ts
 * binAttempts; parsed by parseTimeline). On stderr, one line
 * `{"event":"started","startMs":...}` as the first attempt goes out, so a
 * caller can time an event from the stream's own start; with `--start-at-ms`
 * (wall clock) the first attempt waits for that moment, so a caller that
 * leaves room for the process to start knows the schedule in advance. Exits 2
 * on bad arguments.
 */
import { connect, type Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { Histogram } from '../../gen/cnibench/v1/agent.js';
import { type Attempt, binAttempts } from '../../report/disruption.js';
import { durationFlag, failWith, intFlag } from './cli-args.js';
import { encodeRrPreamble } from './tcp-rr-wire.js';

const TOOL = 'probe-stream';
const { values: v } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    duration: { type: 'string', default: '10' },
    rate: { type: 'string', default: '100' },
    kept: { type: 'string', default: '4' },
    'timeout-ms': { type: 'string', default: '1000' },
    'bin-ms': { type: 'string', default: '100' },
    'start-at-ms': { type: 'string', default: '0' },
  },
});
const o = {
  host: v.host,
  port: intFlag(TOOL, 'port', v.port, 1, 65535),
  seconds: durationFlag(TOOL, v.duration),
  rate: intFlag(TOOL, 'rate', v.rate, 1, 10_000),
  kept: intFlag(TOOL, 'kept', v.kept, 1, 1000),
  timeoutMs: intFlag(TOOL, 'timeout-ms', v['timeout-ms'], 1, 60_000),
  binMs: intFlag(TOOL, 'bin-ms', v['bin-ms'], 1, 60_000),
  startAtMs: intFlag(TOOL, 'start-at-ms', v['start-at-ms'], 0, Number.MAX_SAFE_INTEGER),
};

const attempts: Attempt[] = [];
const live = new Set<Socket>();
// Set when the first attempt goes out (at --start-at-ms, or at once when that has passed).
let startWall = Date.now();
let t0 = process.hrtime.bigint();
const nowMs = (): number => Number(process.hrtime.bigint() - t0) / 1e6;
let inFlight = 0;

function settle(atMs: number, kind: Attempt['kind'], reason?: string): void {
  inFlight--;
  const latencyUs = Math.max(0, (nowMs() - atMs) * 1000);
  attempts.push(reason === undefined ? { atMs, kind, latencyUs } : { atMs, kind, reason });
}

const crrFirst = Buffer.concat([
  encodeRrPreamble({ requestBytes: 1, responseBytes: 1, closeAfterResponse: true }),
  Buffer.from('q'),
]);

function newConnection(atMs: number): void {
  inFlight++;
  let done = false;
  let got = 0;
  const s = connect({ host: o.host, port: o.port, noDelay: true });
  live.add(s);
  const finish = (reason?: string): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    s.destroy();
    settle(atMs, 'new', reason);
  };
  const timer = setTimeout(() => finish('ETIMEDOUT'), o.timeoutMs);
  s.on('connect', () => s.write(crrFirst));
  s.on('data', (c: Buffer) => {
    got += c.length;
    if (got > 1) finish('EPROTO');
    else s.end();
  });
  s.on('end', () => finish(got === 1 ? undefined : 'EOF'));
  s.on('error', (e: NodeJS.ErrnoException) => finish(e.code ?? 'EUNKNOWN'));
  s.on('close', () => {
    live.delete(s);
    finish('ECLOSED');
  });
}

interface Kept {
  socket: Socket | undefined;
  pending: number[];
  sentPreamble: boolean;
}
const kept: Kept[] = Array.from({ length: o.kept }, () => ({ socket: undefined, pending: [], sentPreamble: false }));
const keptFirst = Buffer.concat([
  encodeRrPreamble({ requestBytes: 1, responseBytes: 1, closeAfterResponse: false }),
  Buffer.from('q'),
]);

function breakKept(k: Kept, reason: string): void {
  const s = k.socket;
  k.socket = undefined;
  for (const at of k.pending.splice(0)) settle(at, 'kept', reason);
  s?.destroy();
}

function openKept(k: Kept): Socket {
  const s = connect({ host: o.host, port: o.port, noDelay: true });
  k.socket = s;
  k.sentPreamble = false;
  live.add(s);
  s.on('data', (c: Buffer) => {
    for (let i = 0; i < c.length; i++) {
      const at = k.pending.shift();
      if (at === undefined) return breakKept(k, 'EPROTO');
      settle(at, 'kept');
    }
  });
  s.on('end', () => k.socket === s && breakKept(k, 'EOF'));
  s.on('error', (e: NodeJS.ErrnoException) => k.socket === s && breakKept(k, e.code ?? 'EUNKNOWN'));
  s.on('close', () => {
    live.delete(s);
    if (k.socket === s) breakKept(k, 'ECLOSED');
  });
  return s;
}

function keptRequest(atMs: number, k: Kept): void {
  inFlight++;
  // The oldest answer overdue: the connection is stuck; fail what waits on it and start over.
  if (k.socket && k.pending.length && atMs - (k.pending[0] as number) > o.timeoutMs) breakKept(k, 'ETIMEDOUT');
  const s = k.socket ?? openKept(k);
  k.pending.push(atMs);
  s.write(k.sentPreamble ? 'q' : keptFirst);
  k.sentPreamble = true;
}

const periodMs = 1000 / o.rate;
const total = Math.floor(o.seconds * o.rate);
let tick = 0;
function schedule(): void {
  // Fixed schedule from t0: a late timer sends every attempt that is due, each with its own intended time.
  while (tick < total && tick * periodMs <= nowMs()) {
    const at = tick * periodMs;
    newConnection(at);
    keptRequest(at, kept[tick % o.kept] as Kept);
    tick++;
  }
  if (tick < total) setTimeout(schedule, Math.max(0, tick * periodMs - nowMs()));
  else drain();
}

function drain(): void {
  const deadline = nowMs() + o.timeoutMs;
  const check = (): void => {
    if (inFlight > 0 && nowMs() < deadline) return void setTimeout(check, 10);
    for (const k of kept) breakKept(k, 'ETIMEDOUT');
    for (const s of live) s.destroy();
    const bins = binAttempts(attempts, o.binMs, o.seconds * 1000).map((b) => ({
      new: { ...b.new, histogram: Histogram.toJSON(b.new.histogram) },
      kept: { ...b.kept, histogram: Histogram.toJSON(b.kept.histogram) },
    }));
    const out = { tool: TOOL, startMs: startWall, binMs: o.binMs, rate: o.rate, kept: o.kept, bins };
    process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0));
  };
  check();
}

if (!(o.seconds * o.rate >= 1)) failWith(TOOL, 2, '--duration × --rate must give at least one attempt');
function start(): void {
  startWall = Date.now();
  t0 = process.hrtime.bigint();
  // A caller timing an event against the stream waits for this line (process start-up takes seconds on a busy machine).
  process.stderr.write(`${JSON.stringify({ tool: TOOL, event: 'started', startMs: startWall })}\n`);
  schedule();
}
// A wall-clock start lets a caller that spawned the stream early fire its event on the stream's own schedule.
setTimeout(start, Math.max(0, o.startAtMs - Date.now()));
