/**
 * The collector under load, measured and printed, never asserted: the real
 * collector (in this process, so its CPU and RSS are this process's) on
 * 127.0.0.1 port 0 with its SQLite store in a temporary directory, and N
 * simulated agents in a few worker processes over real gRPC. A run is live in
 * the collector (its record in the store, a sampling job per agent in the job
 * tracker, as the orchestrator registers them), so every sample takes the whole
 * path an agent's sample takes: decode, identity, sequence window, ownership,
 * the write queue's batched transaction, and the ack after commit. The
 * simulated agents run no tools (the orchestrator's phases are not executed).
 *
 * Printed per step: offered and acknowledged samples/s, the collector's CPU
 * (cores, over the production window only) and peak RSS, ack latency
 * p50/p99/max (merged raw samples, from production to ack), samples stored,
 * acknowledged, still held by the agents (unacknowledged: a simulated agent,
 * like the real outbox, keeps it and would resend it), and lost: acknowledged
 * (so forgotten by its agent) yet not in the store. Then where each sample's
 * time went (written by its agent, received by the collector's write queue,
 * committed, acknowledged) and the collector's event-loop thread's time on a
 * CPU and runnable but waiting for one (/proc schedstat): an event loop that
 * waits for a CPU is starved by the machine, one that runs is busy.
 *
 * The workers run in sessions of their own: with Linux's autogroup scheduling
 * (on by default on desktop and many server kernels) a session's processes
 * split one share of the machine, so workers in the collector's session took
 * the collector's CPU; on a loaded machine that, not the collector, made ack
 * latency at 1,000 streams run into seconds (`--steps 1000x1s,1000x1` shows
 * both side by side).
 *
 *   npm run bench:collector-load -- [--agents 1000,5000] [--seconds 30] [--workers 4] [--rate 1]
 *   ... --steps 1000x1s,1000x1,100x10 : <agents>x<samples/s each>, s for workers in the collector's session
 *   ... --ramp 200 [--rates 5,10,20,40,80] : the highest sustained rate (acks keep up: p99 at most 2 s,
 *       nothing lost, the store holds what was acknowledged); run as `setsid taskset -c 0 node
 *       dist/bench/collector-load.js --ramp 100 --rates 40,60,80 --worker-cpus 1 --collector-group-nice=-20
 *       --worker-group-nice=-20` to give the collector one core (its session's autogroup nice raised above the
 *       machine's other sessions) and the agents the other: on a shared machine it takes both cores while it runs.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { collectorConfig, startCollector } from '../collector/index.js';
import { createLogger } from '../core/log.js';
import { HEADER, printStages, quantile, row, type Stages, type StepResult, schedstat } from './collector-load-table.js';

const { values } = parseArgs({
  options: {
    agents: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '30' },
    workers: { type: 'string', default: '4' },
    rate: { type: 'string', default: '1' },
    ramp: { type: 'string' },
    rates: { type: 'string', default: '5,10,20,40,80,160' },
    'worker-cpus': { type: 'string' },
    steps: { type: 'string' },
    'collector-group-nice': { type: 'string' },
    'worker-group-nice': { type: 'string' },
  },
});
const WORKER = fileURLToPath(new URL('./collector-load-worker.js', import.meta.url));

function rssMiB(): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024;
}

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

interface WorkerResult {
  sent: number;
  acked: number;
  errors: number;
  latencies: number[];
  writeDelays: number[];
  cpuSeconds: number;
}

/**
 * One step. The agents' workers run in their own sessions (so their own
 * scheduler autogroups, as agents on other nodes would not share the
 * collector's CPU); `shared` keeps them in the collector's session, where
 * Linux's autogroup scheduling makes them split one group's share of the
 * machine with the collector (how this bench ran before).
 */
async function step(
  agents: number,
  seconds: number,
  workers: number,
  rate: number,
  shared = false,
): Promise<StepResult> {
  const dir = mkdtempSync(join(tmpdir(), 'cnib-load-'));
  const c = await startCollector(
    collectorConfig({
      grpcListen: '127.0.0.1:0',
      httpHost: '127.0.0.1',
      httpPort: 0,
      dbPath: join(dir, 'load.db'),
      heartbeatIntervalMs: 5000,
      livenessTimeoutMs: 120_000,
    }),
    createLogger({ component: 'bench' }, 'error'),
  );
  try {
    const runId = `load-${agents}-${rate}`;
    const now = Date.now();
    c.store.insertRun({
      id: runId,
      state: 'running',
      reason: 'bench:collector-load',
      createdMs: now,
      startedMs: now,
      endedMs: 0,
      scenario: {},
      cluster: {},
    });
    for (let i = 0; i < agents; i++)
      c.tracker.expect({
        jobId: `${runId}-sample-load-${i}`,
        runId,
        agentId: `load-${i}`,
        phaseIndex: 0,
        warmup: false,
      });
    // Stage timestamps at the collector: a sample reaches the write queue (received) and commits.
    const stages: Stages = { written: [], received: [], committed: [], acked: [] };
    const addSample = c.queue.addSample.bind(c.queue);
    c.queue.addSample = (record) => {
      const produced = record.sample.timeMs;
      stages.received.push(Date.now() - produced);
      return addSample(record).then(() => {
        stages.committed.push(Date.now() - produced);
      });
    };
    const per = Math.ceil(agents / workers);
    const children: ChildProcess[] = [];
    const readies: Promise<void>[] = [];
    const outcomes = Array.from({ length: workers }, (_, w) => {
      const count = Math.max(0, Math.min(per, agents - w * per));
      const args = [c.grpcAddress, String(w * per), String(count), String(rate), String(seconds), runId];
      // Under taskset the worker is taskset's child: fork() runs node directly, so pin through execPath's wrapper.
      // detached: a session (so an autogroup) of its own; it exits when the parent's IPC channel closes.
      const env = { ...process.env, CNIB_LOAD_GROUP_NICE: shared ? '' : (values['worker-group-nice'] ?? '') };
      const child = values['worker-cpus']
        ? fork(WORKER, args, {
            execPath: 'taskset',
            execArgv: ['-c', values['worker-cpus'], process.execPath],
            stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
            detached: !shared,
            env,
          })
        : fork(WORKER, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], detached: !shared, env });
      children.push(child);
      let markReady: () => void = () => undefined;
      readies.push(new Promise<void>((r) => (markReady = r)));
      return new Promise<WorkerResult>((resolve, reject) => {
        child.on('message', (m: { ready?: number; result?: WorkerResult }) => {
          if (m.ready !== undefined) markReady();
          if (m.result) resolve(m.result);
        });
        child.on('exit', (code) => reject(new Error(`worker ${w} exited with ${code} before its result`)));
      });
    });
    await Promise.all(readies);
    // The collector's event loop: a blocked loop (not a starved machine) shows here.
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    // Every agent has registered and opened its session: the measured window starts now.
    const startAt = Date.now() + 500;
    for (const child of children) child.send({ startAt });
    let cpu0 = process.cpuUsage();
    let rss = 0;
    let cpuUsed = 0;
    const rssTimer = setInterval(() => {
      if (Date.now() >= startAt) rss = Math.max(rss, rssMiB());
    }, 500);
    let sched0 = schedstat();
    // A starved loop runs these timers late: divide by the time that really passed between the two readings.
    let window0 = performance.now();
    let sched = { cpuMs: NaN, waitMs: NaN };
    const cpuStart = setTimeout(
      () => {
        cpu0 = process.cpuUsage();
        sched0 = schedstat();
        window0 = performance.now();
      },
      Math.max(0, startAt - Date.now()),
    );
    const cpuEnd = setTimeout(
      () => {
        const u = process.cpuUsage(cpu0);
        const s1 = schedstat();
        const elapsed = (performance.now() - window0) / 1000;
        cpuUsed = (u.user + u.system) / 1e6 / elapsed;
        sched = { cpuMs: (s1.cpuMs - sched0.cpuMs) / elapsed, waitMs: (s1.waitMs - sched0.waitMs) / elapsed };
      },
      startAt - Date.now() + seconds * 1000,
    );
    const results = await Promise.all(outcomes);
    const lastAckMs = Date.now() - startAt;
    loop.disable();
    // CPU from the window's start to the last ack: what storing and acknowledging every sample cost, backlog included.
    const total = process.cpuUsage(cpu0);
    clearInterval(rssTimer);
    clearTimeout(cpuStart);
    clearTimeout(cpuEnd);
    await c.queue.barrier();
    const lat = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const sent = results.reduce((s, r) => s + r.sent, 0);
    const acked = results.reduce((s, r) => s + r.acked, 0);
    // Acknowledged within 2 s of production (a growing backlog does not count as kept up).
    const inTime = lat.filter((l) => l <= 2000).length;
    return {
      agents,
      rate,
      offered: sent / seconds,
      ackedRate: inTime / seconds,
      cpu: cpuUsed,
      rss,
      p50: quantile(lat, 0.5),
      p99: quantile(lat, 0.99),
      max: lat.at(-1) ?? NaN,
      // An agent forgets a sample only once acknowledged; what is unacknowledged it still holds and resends.
      // So a sample is lost exactly when acknowledged and not in the store.
      lost: Math.max(0, acked - c.store.sampleCount(runId)),
      sent,
      acked,
      stored: c.store.sampleCount(runId),
      errors: results.reduce((s, r) => s + r.errors, 0),
      batches: c.queue.stats.batches,
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
      cpuPerSampleUs: ((total.user + total.system) / Math.max(1, c.store.sampleCount(runId))) | 0,
      paused: c.queue.stats.fullEvents,
      shared,
      loopThreadCpu: sched.cpuMs,
      loopThreadWait: sched.waitMs,
      workerCores: results.reduce((x, r) => x + r.cpuSeconds, 0) / (lastAckMs / 1000),
      stages: {
        ...stages,
        written: results.flatMap((r) => r.writeDelays),
        acked: lat,
      },
    };
  } finally {
    await c.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * With Linux's autogroup scheduling a CPU is shared between sessions, so the
 * collector's share of its core is raised through its session's autogroup nice
 * (the bench must lead its own session: run it under setsid). Its loop
 * thread's schedstat then shows how much of the core it really had.
 */
if (values['collector-group-nice'] !== undefined) {
  const sid = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ')[3];
  if (sid !== String(process.pid))
    throw new Error('--collector-group-nice: the bench must lead its own session (run it under setsid)');
  writeFileSync('/proc/self/autogroup', values['collector-group-nice']);
}

const seconds = Number(values.seconds);
const workers = Number(values.workers);
process.stdout.write(
  `collector load (load average ${load()} at start; CPU is the collector's process over the production window, agents' workers excluded${values['worker-cpus'] ? `; workers on CPU ${values['worker-cpus']}` : ''})\n\n`,
);
process.stdout.write(HEADER);
if (values.ramp) {
  const agents = Number(values.ramp);
  let best: StepResult | undefined;
  const steps: StepResult[] = [];
  for (const rate of values.rates.split(',').map(Number)) {
    const r = await step(agents, seconds, workers, rate);
    steps.push(r);
    process.stdout.write(row(r));
    const keptUp = r.lost === 0 && r.p99 <= 2000 && r.errors === 0 && r.acked === r.sent && r.stored === r.acked;
    if (!keptUp) break;
    best = r;
  }
  process.stdout.write(
    best
      ? `\nhighest sustained: ${best.offered.toFixed(0)} samples/s (${best.agents} agents x ${best.rate}/s) at ${best.cpu.toFixed(2)} cores of collector CPU, ack p99 ${best.p99} ms\n`
      : '\nno step kept up\n',
  );
  process.stdout.write(
    `one core's worth at the CPU cost measured per sample: ${Math.round(1e6 / Math.max(1, ...steps.map((x) => x.cpuPerSampleUs)))} to ${Math.round(1e6 / Math.max(1, Math.min(...steps.map((x) => x.cpuPerSampleUs))))} samples/s (derived from CPU, not sustained)\n`,
  );
  printStages(steps);
} else {
  // --steps 1000x1s,1000x1,100x10: agents x samples/s each [s: workers in the collector's session], side by side
  // in one run; otherwise --agents at --rate.
  const plan = values.steps
    ? values.steps.split(',').map((x) => {
        const m = /^(\d+)x(\d+(?:\.\d+)?)(s?)$/.exec(x.trim());
        if (!m) throw new Error(`--steps: '${x}' is not <agents>x<rate>[s]`);
        return { agents: Number(m[1]), rate: Number(m[2]), shared: m[3] === 's' };
      })
    : values.agents.split(',').map((a) => ({ agents: Number(a), rate: Number(values.rate), shared: false }));
  const rs: StepResult[] = [];
  for (const p of plan) {
    const r = await step(p.agents, seconds, workers, p.rate, p.shared);
    rs.push(r);
    process.stdout.write(row(r));
  }
  printStages(rs);
  // Each step against the first, side by side (e.g. the workers in the collector's session, then in their own).
  const [a] = rs;
  for (const b of a ? rs.slice(1) : [])
    process.stdout.write(
      `\nack p50, ${a!.agents}x${a!.rate}${a!.shared ? 's' : ''} / ${b.agents}x${b.rate}${b.shared ? 's' : ''}: ${(a!.p50 / Math.max(1, b.p50)).toFixed(1)}x (p99 ${(a!.p99 / Math.max(1, b.p99)).toFixed(1)}x); collector loop thread on a CPU ${a!.loopThreadCpu.toFixed(0)} vs ${b.loopThreadCpu.toFixed(0)} ms/s, waiting for one ${a!.loopThreadWait.toFixed(0)} vs ${b.loopThreadWait.toFixed(0)} ms/s; CPU per sample ${a!.cpuPerSampleUs} vs ${b.cpuPerSampleUs} µs\n`,
    );
}
process.stdout.write(`\nload average at end ${load()}\n`);
