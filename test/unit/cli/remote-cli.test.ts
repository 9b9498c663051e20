/**
 * The remote commands against the real collector binary with an operator
 * token (no agents: what needs none): agents, cluster, runs, a run refused
 * for a bad scenario (exit 2, field named) or for want of agents (exit 1,
 * the collector's words), a missing or wrong token, an unknown run, a
 * collector that is not there, and --collector checked before any request.
 * The lab suite test/integration/remote-cli.test.ts runs real runs.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type CollectorMain, startCollectorMain } from '../../support/helpers/collector-main.js';
import { CLI_MAIN, startNode } from '../../support/helpers/procs.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-remote-'));
const tokenFile = join(tmp, 'token');
const wrongFile = join(tmp, 'wrong');
writeFileSync(tokenFile, 'operator-secret-1234567890\n');
writeFileSync(wrongFile, 'not-the-token\n');
let collector: CollectorMain;

before(async () => {
  collector = await startCollectorMain(['--rest-token-file', tokenFile]);
});
after(async () => {
  collector?.proc.child.kill('SIGTERM');
  await collector?.proc.exited;
  rmSync(tmp, { recursive: true, force: true });
});

async function cli(args: string[], token = tokenFile): Promise<{ code: number | null; stdout: string; all: string }> {
  const p = startNode(CLI_MAIN, [...args, '--collector', collector.http, '--token-file', token], {
    CNI_BENCH_LOG_LEVEL: 'error',
  });
  const code = await p.exited;
  return { code, stdout: p.stdout(), all: p.output() };
}

test('agents, cluster and runs answer from the collector in text and JSON', async () => {
  const agents = await cli(['agents']);
  assert.equal(agents.code, 0, agents.all);
  assert.match(agents.stdout, /^\| node \| agent \| connected/);
  assert.match(agents.stdout, /0 of 0 connected/);
  const cluster = await cli(['cluster', '--format', 'json']);
  assert.equal(cluster.code, 0, cluster.all);
  assert.equal(typeof JSON.parse(cluster.stdout).serviceFrontend, 'string');
  const runs = await cli(['runs', '--format', 'json']);
  assert.equal(runs.code, 0, runs.all);
  assert.deepEqual(JSON.parse(runs.stdout), []);
});

test('run: a bad scenario exits 2 naming the field; no agents exits 1 with the collector saying so', async () => {
  const bad = join(tmp, 'bad.yaml');
  writeFileSync(bad, 'measurements:\n  - kind: rr\n    path: service\n    connections: 0\n');
  const r = await cli(['run', '--scenario', bad]);
  assert.equal(r.code, 2, r.all);
  assert.match(r.all, /cni-bench: collector: .*measurements\[0\]\.connections/);
  const ok = join(tmp, 'ok.yaml');
  writeFileSync(ok, 'name: none\nmeasurements:\n  - kind: rr\n    path: pod-to-pod\n');
  const none = await cli(['run', '--scenario', ok]);
  assert.equal(none.code, 1, none.all);
  assert.match(none.all, /cni-bench: collector: .*agent/i);
});

test('a missing or wrong token, an unknown run and an absent collector are errors saying which', async () => {
  const p = startNode(CLI_MAIN, ['runs', '--collector', collector.http], { CNI_BENCH_LOG_LEVEL: 'error' });
  assert.equal(await p.exited, 1, p.output());
  assert.match(p.output(), /cni-bench: collector: missing Authorization: Bearer <token>/);
  const wrong = await cli(['runs'], wrongFile);
  assert.equal(wrong.code, 1, wrong.all);
  assert.match(wrong.all, /bearer token not accepted/);
  const unknown = await cli(['report', 'rnothere', '--format', 'html']);
  assert.equal(unknown.code, 1, unknown.all);
  assert.match(unknown.all, /run 'rnothere' not found/);
  const cancel = await cli(['cancel', 'rnothere']);
  assert.equal(cancel.code, 1, cancel.all);
  const away = startNode(CLI_MAIN, ['agents', '--collector', 'http://127.0.0.1:9'], { CNI_BENCH_LOG_LEVEL: 'error' });
  assert.equal(await away.exited, 1, away.output());
  assert.match(away.output(), /--collector: cannot reach http:\/\/127\.0\.0\.1:9\/ \(ECONNREFUSED\)/);
});

test('--collector and the run id are checked before any request (exit 2, flag named)', async () => {
  for (const [args, re] of [
    [['runs', '--collector', 'ftp://x'], /--collector: must be http:\/\/ or https:\/\//],
    [['runs', '--collector', 'http://u:p@host'], /--collector: must not carry credentials/],
    [['runs'], /--collector: none given, and no kubeconfig to find the in-cluster collector with/],
    [['runs', '--kubeconfig', join(tmp, 'absent')], /--kubeconfig: no such file/],
    [['runs', '--release', 'Not_A_Release'], /--release: not a release name/],
    [['report', '../etc', '--collector', 'http://127.0.0.1:9'], /RUN: a run id/],
    [['runs', '--collector', 'http://127.0.0.1:9', '--token-file', join(tmp, 'absent')], /--token-file: cannot read/],
  ] as [string[], RegExp][]) {
    // No kubeconfig anywhere: an empty KUBECONFIG and a HOME without ~/.kube/config.
    const p = startNode(CLI_MAIN, args, {
      CNI_BENCH_LOG_LEVEL: 'error',
      CNI_BENCH_COLLECTOR: '',
      KUBECONFIG: '',
      HOME: tmp,
    });
    assert.equal(await p.exited, 2, `${args.join(' ')}: ${p.output()}`);
    assert.match(p.output(), re);
  }
});
