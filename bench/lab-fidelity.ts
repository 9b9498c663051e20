/**
 * Lab fidelity: does the harness cost anything? Measures HTTP RPS through a
 * ClusterIP Service in the lab twice per round, in alternation: once through
 * cni-bench (collector -> agent -> wrk) and once with the same wrk arguments run
 * directly in the same client pod namespace against an identical server behind
 * an identical Service. Prints medians and the ratio; asserts nothing.
 *
 *   npm run bench:lab-fidelity -- [--rounds 3] [--duration 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { wrk } from '../agent/drivers/wrk.js';
import { startCollector } from '../collector/collector.js';
import { collectorConfig } from '../collector/config.js';
import { createLogger } from '../core/log.js';
import { run, spawnLongRunning } from '../core/process.js';
import { Lab } from '../lab/lab.js';

const ECHO = fileURLToPath(new URL('../agent/servers/http-echo.js', import.meta.url));
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' } } });
const rounds = Number(values.rounds);
const duration = Number(values.duration);
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
  const echo = spawnLongRunning('ip', ['netns', 'exec', server.pods[0].ns, process.execPath, ECHO, '--port', '8081']);
  const svc = await lab.services.expose('bench-direct', 80, [{ ip: server.pods[0].ip, port: 8081 }]);
  await sleep(500);

  const modes = [
    { mode: 'short-connection' as const, keepalive: false },
    { mode: 'keepalive' as const, keepalive: true },
  ];
  const results = new Map<string, { harness: number[]; direct: number[] }>(modes.map((m) => [m.mode, { harness: [], direct: [] }]));
  for (let r = 0; r < rounds; r++) {
    for (const m of modes) {
      const created = collector.api.create({ warmupSeconds: 1, durationSeconds: duration, measurements: [{ kind: 'http', path: 'service', mode: m.mode, connections: 64 }] });
      await collector.orchestrator.wait(created.id);
      const row = collector.api.reportModel(created.id).rows[0];
      results.get(m.mode)?.harness.push(row?.value ?? NaN);

      const args = (seconds: number) => wrk.buildClientArgs({ targetHost: svc.ip, targetPort: svc.port, durationSeconds: seconds, connections: 64, threads: 2, keepalive: m.keepalive, path: '/' });
      await run('ip', ['netns', 'exec', client.pods[0].ns, 'wrk', ...args(1)], { tool: 'wrk' });
      const out = await run('ip', ['netns', 'exec', client.pods[0].ns, 'wrk', ...args(duration)], { tool: 'wrk' });
      const parsed = wrk.parse(out.stdout, { targetHost: svc.ip, targetPort: svc.port, durationSeconds: duration });
      results.get(m.mode)?.direct.push(parsed.kind?.$case === 'http' ? parsed.kind.value.requestsPerSecond : NaN);
      process.stderr.write(`round ${r + 1}/${rounds} ${m.mode}: cni-bench ${results.get(m.mode)?.harness.at(-1)?.toFixed(0)} req/s, direct ${results.get(m.mode)?.direct.at(-1)?.toFixed(0)} req/s\n`);
    }
  }
  await echo.stop();
  process.stdout.write(`\nlab fidelity: HTTP c64 through a lab ClusterIP, ${rounds} rounds x ${duration} s, alternating\n\n`);
  process.stdout.write('| mode | cni-bench median req/s | direct wrk median req/s | ratio (cni-bench / direct) | cni-bench samples | direct samples |\n|---|---:|---:|---:|---|---|\n');
  for (const [mode, r] of results) {
    const h = median(r.harness);
    const d = median(r.direct);
    process.stdout.write(`| ${mode} | ${h.toFixed(0)} | ${d.toFixed(0)} | ${(h / d).toFixed(3)} | ${r.harness.map((x) => x.toFixed(0)).join(', ')} | ${r.direct.map((x) => x.toFixed(0)).join(', ')} |\n`);
  }
} finally {
  await stopAll();
}
