/**
 * Lab fidelity: does the harness cost anything? For every HTTP row of the
 * default lab (keep-alive c64/c256 and short-connection c64, pod to pod and
 * through the Service, and the fixed-rate latency rows), cni-bench's number
 * (collector -> agent -> tool, one measured round per run) against the same
 * tool with the same arguments run by hand in the same client pod, on the
 * same node CPUs, against the same server tool (fortio) behind an identical
 * path, in the same lab and run, alternating ABBA so drift cancels. The hand
 * server listens on its own ports, one per destination (pod IP or Service),
 * as the harness's do (docs/findings/service-short-connection-artifact.md).
 * Prints medians and the ratio (higher is better: cni-bench / hand for
 * rates, hand / cni-bench for latencies); asserts nothing.
 *
 *   npm run bench:lab-fidelity -- [--pairs 3] [--duration 3] [--warmup 1]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { clientDrivers, serverDrivers } from '../agent/index.js';
import {
  collectorConfig,
  DEFAULT_MEASUREMENTS,
  measurementLabel,
  parseScenario,
  startCollector,
} from '../collector/index.js';
import { createLogger } from '../core/log.js';
import { run, spawnLongRunning } from '../core/process.js';
import { JobResult } from '../gen/cnibench/v1/agent.js';
import { Lab, onNodeCpus } from '../lab/index.js';
import { rowMetrics } from '../report/row-metrics.js';
import { writeFindings } from './findings.js';

const { values } = parseArgs({
  options: {
    pairs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
  },
});
const pairs = Number(values.pairs);
const duration = Number(values.duration);
const warmup = Number(values.warmup);
const log = createLogger({ component: 'bench' }, 'warn');
const median = (xs: number[]) => {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b);
  return s.length
    ? s.length % 2
      ? (s[(s.length - 1) / 2] as number)
      : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2
    : NaN;
};
/** Hand servers: fortio, like the harness's default HTTP server, on ports of their own. */
const HAND_POD_PORT = 8091;
const HAND_SERVICE_PORT = 8191;

const began = Date.now();
const tmp = mkdtempSync(join(tmpdir(), 'cnib-bench-'));
const lab = await Lab.create({ nodes: 2, log });
const collector = await startCollector(
  collectorConfig({
    grpcListen: `unix:${lab.controlSocket}`,
    httpHost: '127.0.0.1',
    httpPort: 0,
    dbPath: join(tmp, 'b.db'),
  }),
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
  while (collector.registry.available().length < lab.agentCount) await sleep(100);
  const [server, client] = lab.plan.nodes;
  const sp = server?.pods[0];
  const cp = client?.pods[0];
  if (!server || !client || !sp || !cp) throw new Error('lab has no pods');
  // The fortio server exactly as the agent starts it for cni-bench's rows.
  const fortioServerArgs = (port: number): string[] => serverDrivers.get('fortio')?.buildServerArgs({ port }) ?? [];
  const fortioServer = (port: number) =>
    spawnLongRunning(...onNodeCpus(server.cpus, 'ip', ['netns', 'exec', sp.ns, 'fortio', ...fortioServerArgs(port)]), {
      tool: 'fortio',
    });
  const servers = [fortioServer(HAND_POD_PORT), fortioServer(HAND_SERVICE_PORT)];
  const svc = await lab.services.expose('fidelity-hand', 80, [{ ip: sp.ip, port: HAND_SERVICE_PORT }]);
  await sleep(500);

  const rows = DEFAULT_MEASUREMENTS.filter((m) => m.kind === 'http');
  const parsed = parseScenario({ measurements: rows }).measurements;
  type Row = { label: string; higherIsBetter: boolean; unit: string; harness: number[]; hand: number[]; note?: string };
  const out: Row[] = parsed.map((m) => ({
    label: measurementLabel(m),
    higherIsBetter: true,
    unit: '',
    harness: [],
    hand: [],
  }));

  const viaHarness = async (i: number): Promise<number> => {
    const created = collector.api.create({
      name: 'fidelity',
      warmupSeconds: warmup,
      durationSeconds: duration,
      rounds: 1,
      measurements: [rows[i]],
    });
    await collector.orchestrator.wait(created.id);
    const row = collector.api.reportModel(created.id).rows[0];
    const head = row?.metrics[0];
    const o = out[i] as Row;
    if (head) [o.unit, o.higherIsBetter] = [head.unit, head.higherIsBetter];
    if (row?.invalid) o.note = `cni-bench row invalid: ${row.invalid.reason}`;
    return head?.value ?? NaN;
  };
  const byHand = async (i: number): Promise<number> => {
    const m = parsed[i];
    if (m?.kind !== 'http') return NaN;
    const tool = m.qps > 0 ? (m.tool === 'auto' ? 'fortio' : m.tool) : 'wrk';
    const driver = clientDrivers.get(tool);
    if (!driver || tool === 'http-open-loop') {
      (out[i] as Row).note = `${tool} is cni-bench's built-in client: there is no native tool to run by hand`;
      return NaN;
    }
    const target =
      m.path === 'service'
        ? { targetHost: svc.ip, targetPort: svc.port }
        : { targetHost: sp.ip, targetPort: HAND_POD_PORT };
    const spec = (seconds: number) => ({
      ...target,
      durationSeconds: seconds,
      connections: m.connections,
      threads: Math.min(m.threads, m.connections),
      keepalive: m.mode === 'keepalive',
      path: m.urlPath,
      qps: m.qps,
    });
    const exec = (seconds: number) =>
      run(...onNodeCpus(client.cpus, 'ip', ['netns', 'exec', cp.ns, tool, ...driver.buildClientArgs(spec(seconds))]), {
        tool,
        timeoutMs: (seconds + 30) * 1000,
      });
    if (warmup > 0) await exec(warmup);
    const res = await exec(duration);
    const measurement = driver.parse(res.stdout, spec(duration));
    return rowMetrics([JobResult.fromPartial({ measurement, tool })])[0]?.value ?? NaN;
  };
  for (let p = 0; p < pairs; p++) {
    for (let i = 0; i < rows.length; i++) {
      const o = out[i] as Row;
      // ABBA: alternate which goes first, so drift and order effects cancel out.
      if (p % 2 === 0) {
        o.harness.push(await viaHarness(i));
        o.hand.push(await byHand(i));
      } else {
        o.hand.push(await byHand(i));
        o.harness.push(await viaHarness(i));
      }
      process.stderr.write(
        `pair ${p + 1}/${pairs} ${o.label}: cni-bench ${o.harness.at(-1)?.toFixed(2)}, by hand ${o.hand.at(-1)?.toFixed(2)} ${o.unit}\n`,
      );
    }
  }
  await Promise.all(servers.map((s) => s.stop()));
  await lab.services.remove('fidelity-hand');
  const lines = [
    `lab fidelity: every HTTP row of the default lab, ${pairs} ABBA pairs of ${duration} s (warm-up ${warmup} s each), 2 lab nodes on their own CPUs; hand runs: the same tool and arguments in the same client pod and CPUs against fortio on the same path`,
    '',
    '| row | unit | cni-bench median | by-hand median | ratio (>= 0.95 wanted) | cni-bench | by hand | note |',
    '|---|---|---:|---:|---:|---|---|---|',
  ];
  for (const o of out) {
    const h = median(o.harness);
    const d = median(o.hand);
    const ratio = o.higherIsBetter ? h / d : d / h;
    const f = (xs: number[]) => xs.map((x) => (Number.isFinite(x) ? x.toFixed(x >= 100 ? 0 : 2) : '—')).join(', ');
    lines.push(
      `| ${o.label} | ${o.unit} | ${Number.isFinite(h) ? h.toFixed(2) : '—'} | ${Number.isFinite(d) ? d.toFixed(2) : '—'} | ${Number.isFinite(ratio) ? ratio.toFixed(3) : '—'} | ${f(o.harness)} | ${f(o.hand)} | ${o.note ?? ''} |`,
    );
  }
  lines.push('', `wall time ${((Date.now() - began) / 1000).toFixed(0)} s`);
  process.stdout.write(`\n${lines.join('\n')}\n`);
  await writeFindings({
    bench: 'lab-fidelity',
    title: 'Lab fidelity: every HTTP row of the default lab, cni-bench against the same tool by hand',
    body: lines.join('\n'),
  });
} finally {
  await stopAll();
}
