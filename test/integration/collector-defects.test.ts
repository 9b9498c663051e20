/**
 * The defects found by probing the collector (issue 20), each against the real
 * collector binary on port 0: a request target that is not a path, a limit that
 * is not an integer, start-up on a database path that cannot work, and a cancel
 * while the agents do not answer.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CollectorMain } from '../support/helpers/collector-main.js';
import * as collectorMain from '../support/helpers/collector-main.js';
import { getJson, stop, waitFor } from '../support/helpers/procs.js';
import { SimAgent } from '../support/helpers/sim-agent.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-defects-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('the REST server answers every request target, before and after auth', () => {
  let c: CollectorMain;
  before(async () => {
    c = await collectorMain.startCollectorMain([]);
  });
  after(() => stop(c.proc));

  test('`//`, absolute-form and malformed targets get 400 naming url; the collector lives on', async () => {
    for (const target of ['//', '//v1/runs', 'http://x/', '*', '/%zz/%', '/v1/runs?limit=%']) {
      const res = await collectorMain.rawHttp(c.http, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      const status = collectorMain.rawStatus(res);
      assert.ok(status >= 400 && status < 500, `${target}: ${res.slice(0, 200)}`);
      if (status === 400 && target.startsWith('/') && !target.startsWith('/%') && !target.includes('limit'))
        assert.match(res, /"url: /, target);
    }
    assert.equal(c.proc.child.exitCode, null, c.proc.output());
    assert.equal((await getJson(`${c.http}/healthz`)).status, 200);
  });

  test('?limit= that is not an integer 1..1000 is a 400 naming limit, never a 500', async () => {
    for (const limit of ['1.5', '0', '-1', '1e3', 'abc', '1001', '99999999999999999999', '']) {
      const r = await getJson(`${c.http}/v1/runs?limit=${encodeURIComponent(limit)}`);
      assert.equal(r.status, 400, `limit=${limit}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.message, /^limit: /);
      assert.equal(r.body.field, 'limit');
    }
    assert.equal((await getJson(`${c.http}/v1/runs?limit=7`)).status, 200);
  });
});

describe('start-up failures are one line naming the path and what to do', () => {
  const corrupt = join(tmp, 'corrupt.db');
  const notDir = join(tmp, 'plain-file');
  before(() => {
    writeFileSync(corrupt, 'this is not a SQLite database '.repeat(200));
    writeFileSync(notDir, 'x');
    chmodSync(notDir, 0o444);
  });

  for (const [what, db, why] of [
    ['a directory under /proc', '/proc/x/c.db', /cannot create directory '\/proc\/x'/],
    ['a corrupt file', corrupt, /not a usable cni-bench database/],
    ['a path under a plain file', join(notDir, 'c.db'), /is not a directory/],
    ['a directory the kernel will not let anyone write', '/proc/c.db', /cannot open it/],
  ] as const) {
    test(what, async () => {
      const p = collectorMain.spawnCollector(['--db', db]);
      // unref: a timer left pending would hold this file's process open for its whole length after the tests.
      const code = await Promise.race([p.exited, new Promise((r) => setTimeout(() => r('hung'), 180_000).unref())]);
      if (code === 'hung') p.child.kill('SIGKILL');
      assert.equal(code, 2, p.output());
      const lines = p.output().trim().split('\n');
      assert.equal(lines.length, 1, p.output());
      assert.ok(lines[0]!.includes(`'${db}'`), lines[0]);
      assert.match(lines[0]!, why);
      assert.match(lines[0]!, /; (create|point|move)/, 'says what to do');
      assert.doesNotMatch(p.output(), /\n\s+at /, 'no stack');
    });
  }
});

describe('cancel answers at once while the agents do not', () => {
  let c: CollectorMain;
  const sims: SimAgent[] = [];
  before(async () => {
    c = await collectorMain.startCollectorMain(['--liveness-timeout-ms', '60000']);
    for (const node of ['mute-a', 'mute-b']) {
      const s = new SimAgent({ address: c.grpc });
      sims.push(s);
      const reg = await s.register({
        nodeName: node,
        tools: [{ name: 'iperf3', version: '3.18', path: '/usr/bin/iperf3' }],
      });
      s.open((reg as { agentId: string }).agentId);
    }
    await waitFor(
      'two agents',
      async () =>
        (await getJson(`${c.http}/v1/agents`)).body.agents.filter((a: { connected: boolean }) => a.connected).length ===
        2,
      120_000,
    );
  });
  after(async () => {
    for (const s of sims) s.close();
    await stop(c.proc);
  });

  test('DELETE is 202 with the run as it stands; the run ends cancelled in the background', async () => {
    const created = await getJson(`${c.http}/v1/runs`, {
      method: 'POST',
      body: JSON.stringify({
        serverNode: 'mute-a',
        clientNode: 'mute-b',
        warmupSeconds: 0,
        durationSeconds: 5,
        measurements: [{ kind: 'throughput', path: 'pod-to-pod', tool: 'iperf3' }],
      }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await waitFor('a job sent to the mute server', () => sims[0]!.jobs().length > 0, 20_000);
    const del = await getJson(`${c.http}/v1/runs/${created.body.id}`, { method: 'DELETE' });
    assert.equal(del.status, 202, JSON.stringify(del.body));
    assert.ok(['pending', 'running', 'cancelled'].includes(del.body.state), del.body.state);
    const end = await waitFor(
      'the run to end',
      async () => {
        const r = await getJson(`${c.http}/v1/runs/${created.body.id}`);
        return r.body.state !== 'running' && r.body.state !== 'pending' ? r.body : undefined;
      },
      120_000,
      250,
    );
    assert.equal(end.state, 'cancelled');
  });
});

describe('safe defaults: loopback unless told, and never exposed without a token and TLS', () => {
  test('listening on all addresses without a token and TLS is refused at start-up, naming the field', async () => {
    for (const args of [
      ['--grpc-listen', '0.0.0.0:0'],
      ['--http-host', '0.0.0.0'],
    ]) {
      const p = collectorMain.spawnCollector(args);
      assert.equal(await p.exited, 2, p.output());
      assert.match(p.output(), /(grpcListen|httpHost): listening beyond loopback needs restTokenFile and tlsCertFile/);
      assert.doesNotMatch(p.output(), /\n\s+at /);
    }
  });

  test('the defaults listen on loopback; --insecure true is the explicit way out', async () => {
    const c = await collectorMain.startCollectorMain(['--grpc-listen', '127.0.0.1:0']);
    assert.match(c.http, /^http:\/\/127\.0\.0\.1:/);
    await stop(c.proc);
    const open = await collectorMain.startCollectorMain([
      '--grpc-listen',
      '0.0.0.0:0',
      '--http-host',
      '0.0.0.0',
      '--insecure',
      'true',
    ]);
    assert.match(open.grpc, /^0\.0\.0\.0:\d+$/);
    await stop(open.proc);
  });
});
