/**
 * The collector under load, measured and printed, never asserted: the real
 * collector (in this process, so its CPU and RSS are this process's) on
 * 127.0.0.1 port 0, and N simulated agents in a few worker processes over real
 * gRPC, each streaming one dataplane sample a second. Printed per step: the
 * collector's CPU (cores), RSS, ack latency p50/p99/max (merged raw samples),
 * and messages lost (sent but never acknowledged). The samples are refused as
 * belonging to no run of theirs (the collector keeps only what an agent's own
 * jobs produce), so this measures decode, identity, sequence window and ack,
 * not the SQLite insert. All traffic stays on 127.0.0.1.
 *
 *   npm run bench:collector-load -- [--agents 1000,5000] [--seconds 30] [--workers 4] [--rate 1]
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { collectorConfig, startCollector } from '../collector/index.js';
import { createLogger } from '../core/log.js';

const { values } = parseArgs({
  options: {
    agents: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '30' },
    workers: { type: 'string', default: '4' },
    rate: { type: 'string', default: '1' },
  },
});
const WORKER = fileURLToPath(new URL('./collector-load-worker.js', import.meta.url));

function rssMiB(): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024;
}

function quantile(sorted: number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN;
}

interface WorkerResult {
  sent: number;
  acked: number;
  errors: number;
  latencies: number[];
}

async function step(agents: number, seconds: number, workers: number, rate: number): Promise<void> {
  const c = await startCollector(
    collectorConfig({
      grpcListen: '127.0.0.1:0',
      httpHost: '127.0.0.1',
      httpPort: 0,
      dbPath: ':memory:',
      heartbeatIntervalMs: 5000,
      livenessTimeoutMs: 60_000,
    }),
    createLogger({ component: 'bench' }, 'error'),
  );
  const per = Math.ceil(agents / workers);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let peakRss = rssMiB();
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, rssMiB())), 500);
  const results = await Promise.all(
    Array.from({ length: workers }, (_, w) => {
      const count = Math.max(0, Math.min(per, agents - w * per));
      return new Promise<WorkerResult>((resolve, reject) =>
        execFile(
          process.execPath,
          [WORKER, c.grpcAddress, String(w * per), String(count), String(rate), String(seconds)],
          { maxBuffer: 256 * 1024 * 1024 },
          (err, stdout, stderr) =>
            err
              ? reject(new Error(`worker ${w}: ${err.message} ${stderr.slice(-500)}`))
              : resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as WorkerResult),
        ),
      );
    }),
  );
  clearInterval(rssTimer);
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const used = process.cpuUsage(cpu0);
  const lat = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const sent = results.reduce((s, r) => s + r.sent, 0);
  const acked = results.reduce((s, r) => s + r.acked, 0);
  const errors = results.reduce((s, r) => s + r.errors, 0);
  const registered = c.registry.list().length;
  await c.close();
  process.stdout.write(
    `| ${agents} | ${rate} | ${(sent / seconds).toFixed(0)} | ${((used.user + used.system) / 1e6 / wallS).toFixed(2)} | ${peakRss.toFixed(0)} | ${quantile(lat, 0.5)} | ${quantile(lat, 0.99)} | ${lat.at(-1) ?? NaN} | ${sent - acked} of ${sent} | ${registered} | ${errors} |\n`,
  );
}

const seconds = Number(values.seconds);
process.stdout.write(
  `collector load (load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at start; CPU is the collector's process, workers excluded)\n\n`,
);
process.stdout.write(
  '| agents | samples/s each | samples/s total | collector CPU (cores) | collector RSS peak (MiB) | ack p50 (ms) | ack p99 (ms) | ack max (ms) | lost | registered | stream errors |\n|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|\n',
);
for (const a of values.agents.split(',').map(Number))
  await step(a, seconds, Number(values.workers), Number(values.rate));
process.stdout.write(
  `\nload average at end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
