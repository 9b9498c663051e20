/**
 * Lab fidelity: does the harness cost anything? Measures HTTP RPS through a
 * ClusterIP Service in the lab twice per round, in alternation: once through
 * cni-bench (collector -> agent -> wrk) and once with the same wrk arguments run
 * directly in the same client pod namespace against an identical server behind
 * an identical Service. Prints medians and the ratio; asserts nothing.
 *
 *   npm run bench:lab-fidelity -- [--rounds 6] [--duration 5] [--sample-interval MS]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { HTTP_ECHO_MAIN, wrk } from '../agent/index.js';
import { collectorConfig, startCollector } from '../collector/index.js';
import { createLogger } from '../core/log.js';
import { run, spawnLongRunning } from '../core/process.js';
import { Lab } from '../lab/index.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '6' }, duration: { type: 'string', default: '5' }, 'sample-interval': { type: 'string' }, 'fresh-direct': { type: 'boolean', default: false } } });
const rounds = Number(values.rounds);
const duration = Number(values.duration);
/** Both paths get the same unrecorded warm-up (the lab default). */
const WARMUP_SECONDS = 2;
const log = createLogger({ component: 'bench' }, 'warn');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const tmp = mkdtempSync(join(tmpdir(), 'cnib-bench-'));
const lab = await Lab.create({ nodes: 2, log });
const collector = await startCollector(
  collectorConfig({ grpcListen: `unix:${lab.controlSocket}`, httpHost: '127.0.0.1', httpPort: 0, dbPath: join(tmp, 'b.db') }),
  log,
  lab.services,
);
const stopAll = async () => {
  await collector.close();
  await lab.destroy();
  rmSync(tmp, { recursive: true, force: true });
};
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
try {
  lab.startAgents(collector.grpcAddress);
  while (collector.registry.available().length < 2) await sleep(100);
  const [server, client] = lab.plan.nodes;
  if (!server?.pods[0] || !client?.pods[0]) throw new Error('lab has no pods');
  const echo = spawnLongRunning('ip', ['netns', 'exec', server.pods[0].ns, process.execPath, HTTP_ECHO_MAIN, '--port', '8081']);
  const clientNs = client.pods[0].ns;
  const svc = await lab.services.expose('bench-direct', 80, [{ ip: server.pods[0].ip, port: 8081 }]);
  await sleep(500);

  const modes = [
    { mode: 'short-connection' as const, keepalive: false },
    { mode: 'keepalive' as const, keepalive: true },
  ];
  const results = new Map<string, { harness: number[]; direct: number[] }>(modes.map((m) => [m.mode, { harness: [], direct: [] }]));
  const viaHarness = async (m: (typeof modes)[number]): Promise<number> => {
    const created = collector.api.create({
      ...(values['sample-interval'] ? { sampleIntervalMs: Number(values['sample-interval']) } : {}),
      warmupSeconds: WARMUP_SECONDS,
      durationSeconds: duration,
      measurements: [{ kind: 'http', path: 'service', mode: m.mode, connections: 64 }],
    });
    await collector.orchestrator.wait(created.id);
    return collector.api.reportModel(created.id).rows[0]?.value ?? NaN;
  };
  let freshCount = 0;
  const direct = async (m: (typeof modes)[number]): Promise<number> => {
    if (!values['fresh-direct']) return directOn(m, svc);
    // Like the harness: a new server process behind a new Service for every run.
    const n = ++freshCount;
    const server0 = server.pods[0];
    if (!server0) throw new Error('no server pod');
    const fresh = spawnLongRunning('ip', ['netns', 'exec', server0.ns, process.execPath, HTTP_ECHO_MAIN, '--port', String(8100 + n)]);
    const freshSvc = await lab.services.expose(`bench-fresh-${n}`, 80, [{ ip: server0.ip, port: 8100 + n }]);
    await sleep(300);
    try {
      return await directOn(m, freshSvc);
    } finally {
      await fresh.stop();
      await lab.services.remove(`bench-fresh-${n}`);
    }
  };
  const directOn = async (m: (typeof modes)[number], svc: { ip: string; port: number }): Promise<number> => {
    const args = (seconds: number) => wrk.buildClientArgs({ targetHost: svc.ip, targetPort: svc.port, durationSeconds: seconds, connections: 64, threads: 2, keepalive: m.keepalive, path: '/' });
    await run('ip', ['netns', 'exec', clientNs, 'wrk', ...args(WARMUP_SECONDS)], { tool: 'wrk' });
    const out = await run('ip', ['netns', 'exec', clientNs, 'wrk', ...args(duration)], { tool: 'wrk' });
    const parsed = wrk.parse(out.stdout, { targetHost: svc.ip, targetPort: svc.port, durationSeconds: duration });
    return parsed.kind?.$case === 'http' ? parsed.kind.value.requestsPerSecond : NaN;
  };
  for (let r = 0; r < rounds; r++) {
    for (const m of modes) {
      const res = results.get(m.mode);
      if (!res) continue;
      // Alternate which goes first (ABBA), so drift and order effects cancel out.
      if (r % 2 === 0) {
        res.harness.push(await viaHarness(m));
        res.direct.push(await direct(m));
      } else {
        res.direct.push(await direct(m));
        res.harness.push(await viaHarness(m));
      }
      process.stderr.write(`round ${r + 1}/${rounds} ${m.mode}: cni-bench ${res.harness.at(-1)?.toFixed(0)} req/s, direct ${res.direct.at(-1)?.toFixed(0)} req/s\n`);
    }
  }
  await echo.stop();
  process.stdout.write(`\nlab fidelity: HTTP c64 through a lab ClusterIP, ${rounds} rounds x ${duration} s, alternating; direct server ${values['fresh-direct'] ? 'fresh per run (as the harness)' : 'long-lived'}\n\n`);
  process.stdout.write('| mode | cni-bench median req/s | direct wrk median req/s | ratio (cni-bench / direct) | cni-bench samples | direct samples |\n|---|---:|---:|---:|---|---|\n');
  for (const [mode, r] of results) {
    const h = median(r.harness);
    const d = median(r.direct);
    process.stdout.write(`| ${mode} | ${h.toFixed(0)} | ${d.toFixed(0)} | ${(h / d).toFixed(3)} | ${r.harness.map((x) => x.toFixed(0)).join(', ')} | ${r.direct.map((x) => x.toFixed(0)).join(', ')} |\n`);
  }
} finally {
  await stopAll();
}
