/**
 * The remote CLI against a real collector with agents: a two-node lab whose
 * collector serves REST with an operator token, driven only through the
 * built `cni-bench` as a user would: agents, a run from a YAML scenario with
 * its progress as JSON lines, its report as JSON, HTML (loaded in headless
 * Chromium: no console error, no fetch, every measurement drawn; screenshot
 * in test-artifacts/) and CSV, a detached run cancelled, and `compare
 * --fail-on worse` exiting 3 on a provoked regression: the same iperf3
 * measurement in a lab whose uplinks are shaped to 200 Mbit/s (--link-mbit)
 * against the unshaped lab, and 0 the other way round.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after } from 'node:test';
import { pathToFileURL } from 'node:url';
import { type Collector, collectorConfig, startCollector } from '../../collector/index.js';
import { Lab, runInLab } from '../../lab/index.js';
import { CHART_PROBE, chromiumPath, visit } from '../support/helpers/chromium.js';
import { labTest } from '../support/helpers/lab-test.js';
import { CLI_MAIN, startNode } from '../support/helpers/procs.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-remote-lab-'));
const ARTIFACTS = resolve('test-artifacts');
after(() => rmSync(tmp, { recursive: true, force: true }));

const throughput = { kind: 'throughput', path: 'pod-to-pod', rounds: 4, durationSeconds: 1, warmupSeconds: 0 };
const SCENARIO_YAML = `# a YAML scenario, as a user writes one
name: remote cli
roundSleepSeconds: 0
measurements:
  - kind: throughput
    path: pod-to-pod
    rounds: 4
    durationSeconds: 1
    warmupSeconds: 0
  - kind: http
    path: service
    connections: 8
    rounds: 3
    durationSeconds: 1
    warmupSeconds: 0
`;

async function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const p = startNode(CLI_MAIN, args, { CNI_BENCH_LOG_LEVEL: 'warn', ...env });
  const code = await p.exited;
  const stdout = p.stdout();
  return { code, stdout, stderr: p.output().replace(stdout, ''), all: p.output() };
}

labTest(
  'the remote CLI runs, follows, reports, cancels and gates on a regression against a real collector',
  1_500_000,
  async (t, { log, signal }) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // The provoked regression first, in its own lab: uplinks shaped to 200 Mbit/s.
    const shaped = await runInLab(
      {
        nodes: 2,
        proxy: { mode: 'iptables', iptablesBackend: 'legacy' },
        dbPath: join(tmp, 'shaped.db'),
        agentWaitMs: 60_000,
        linkMbit: 200,
      },
      { name: 'shaped 200 Mbit/s', roundSleepSeconds: 0, measurements: [throughput] },
      log,
      signal,
    );
    assert.equal(shaped?.run.state, 'succeeded', JSON.stringify(shaped?.run));
    const shapedFile = join(tmp, 'shaped.json');
    writeFileSync(shapedFile, JSON.stringify(shaped));

    const token = join(tmp, 'token');
    writeFileSync(token, 'remote-cli-operator-token\n');
    let lab: Lab | undefined;
    let collector: Collector | undefined;
    try {
      lab = await Lab.create({
        nodes: 2,
        log,
        proxy: { mode: 'iptables', iptablesBackend: 'legacy' },
        signal: signal,
      });
      collector = await startCollector(
        collectorConfig({
          grpcListen: `unix:${lab.controlSocket}`,
          httpHost: '127.0.0.1',
          httpPort: 0,
          dbPath: join(tmp, 'collector.db'),
          restTokenFile: token,
          heartbeatIntervalMs: 1000,
          livenessTimeoutMs: 30_000,
        }),
        log,
        lab.services,
      );
      lab.startAgents(collector.grpcAddress);
      const remote = ['--collector', collector.httpUrl, '--token-file', token];
      const deadline = Date.now() + 60_000;
      while (collector.registry.available().length < lab.agentCount && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 200));

      const agents = await cli(['agents', ...remote]);
      assert.equal(agents.code, 0, agents.all);
      assert.ok(agents.stdout.endsWith(`${lab.agentCount} of ${lab.agentCount} connected\n`), agents.stdout);

      // A run from a YAML file, followed to its end with progress as JSON lines (stderr is a pipe).
      const yaml = join(tmp, 'scenario.yaml');
      writeFileSync(yaml, SCENARIO_YAML);
      const run = await cli(['run', ...remote, '--scenario', yaml, '--format', 'json']);
      assert.equal(run.code, 0, run.all);
      const report = JSON.parse(run.stdout);
      assert.equal(report.run.state, 'succeeded');
      assert.equal(report.rows.length, 2);
      const progress = run.stderr
        .split('\n')
        .filter((l) => l.includes('"msg":"progress"'))
        .map((l) => JSON.parse(l));
      t.diagnostic(`progress lines: ${progress.length}; last: ${JSON.stringify(progress.at(-1))}`);
      assert.ok(
        progress.some((p) => p.phase?.k === 1 && p.phase?.n === 2 && p.round?.n === 4),
        run.stderr,
      );
      assert.ok(
        progress.some((p) => p.phase?.k === 2 && p.round?.n === 3),
        run.stderr,
      );
      assert.equal(progress.at(-1).state, 'succeeded');
      const id = report.run.id as string;

      const runs = await cli(['runs', ...remote]);
      assert.equal(runs.code, 0, runs.all);
      assert.ok(runs.stdout.includes(`| ${id} | remote cli | succeeded |`), runs.stdout);

      const csv = await cli(['report', id, ...remote, '--format', 'csv']);
      assert.equal(csv.code, 0, csv.all);
      const lines = csv.stdout.trim().split('\r\n');
      assert.ok(lines[0]?.startsWith('run_id,run_name,measurement_id'), lines[0]);
      assert.equal(
        lines.length - 1,
        report.rows.reduce((n: number, r: any) => n + r.metrics.length, 0),
      );

      const html = await cli(['report', id, ...remote, '--format', 'html']);
      assert.equal(html.code, 0, html.all);
      // The REST API serves the same formats, byte for byte what the CLI renders from the JSON model.
      for (const [format, type, body] of [
        ['html', 'text/html; charset=utf-8', html.stdout],
        ['csv', 'text/csv; charset=utf-8', csv.stdout],
      ]) {
        const r: Response = await fetch(`${collector.httpUrl}/v1/runs/${id}/report?format=${format}`, {
          headers: { authorization: 'Bearer remote-cli-operator-token' },
        });
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('content-type'), type);
        assert.equal(await r.text(), body, `REST ${format} differs from the CLI's`);
      }
      const page = join(ARTIFACTS, 'remote-run.html');
      writeFileSync(page, html.stdout);
      if (chromiumPath()) {
        const v = await visit(pathToFileURL(page).href, CHART_PROBE);
        writeFileSync(join(ARTIFACTS, 'remote-run.png'), v.png);
        assert.deepEqual(v.errors, []);
        assert.deepEqual(v.requests, [pathToFileURL(page).href]);
        const charts = JSON.parse(String(v.value));
        const bars = charts.filter((c: any) => c.kind === 'bar').flatMap((c: any) => c.bars);
        assert.equal(bars.length, 2, JSON.stringify(charts));
        assert.ok(
          bars.every((b: any) => b.width > 0 && b.value > 0),
          JSON.stringify(bars),
        );
      } else t.diagnostic('chromium absent: the HTML was written but not loaded (scripts/setup.sh --test installs it)');

      // A detached run, cancelled: the agents stop and the run ends cancelled.
      const long = join(tmp, 'long.json');
      writeFileSync(long, JSON.stringify({ name: 'to cancel', measurements: [{ ...throughput, rounds: 60 }] }));
      const detached = await cli(['run', ...remote, '--scenario', long, '--detach']);
      assert.equal(detached.code, 0, detached.all);
      const longId = detached.stdout.trim();
      await new Promise((r) => setTimeout(r, 3000));
      const cancel = await cli(['cancel', longId, ...remote, '--wait']);
      assert.equal(cancel.code, 0, cancel.all);
      assert.match(cancel.stdout, new RegExp(`^${longId} cancelled`));

      // The gate: the shaped lab is significantly worse than this one; the other way round it is better.
      const gate = await cli(['compare', id, shapedFile, ...remote, '--fail-on', 'worse', '--format', 'md']);
      t.diagnostic(
        gate.all
          .split('\n')
          .filter((l) => /throughput|worse/i.test(l))
          .slice(0, 6)
          .join('\n'),
      );
      assert.equal(gate.code, 3, gate.all);
      assert.match(gate.stderr, /measurement\(s\) significantly worse than [^\n]*\n {2}[^\n]*throughput/i);
      const reverse = await cli(['compare', shapedFile, id, ...remote, '--fail-on', 'worse', '--format', 'html']);
      assert.equal(reverse.code, 0, reverse.all);
      writeFileSync(join(ARTIFACTS, 'remote-compare.html'), reverse.stdout);
    } finally {
      await collector?.close();
      await lab?.destroy();
    }
  },
);
