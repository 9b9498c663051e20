/**
 * A real collector and real agent processes on 127.0.0.1 over gRPC: a real
 * iperf3 job end to end, both APIs, bad input, missing tools, cancellation.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { credentials, Metadata, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import type { Collector } from '../../collector/index.js';
import { createLogger } from '../../core/log.js';
import { type Run, RunServiceClient } from '../../gen/cnibench/v1/run.js';
import { startLoopbackAgent, startLoopbackCollector } from '../support/helpers/loopback.js';
import { freePort, getJson, type Proc, stop, waitFor } from '../support/helpers/procs.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-grpc-'));
let collector: Collector;
const agents: Proc[] = [];
const healthPorts: number[] = [];

async function startAgent(node: string, env: NodeJS.ProcessEnv = {}): Promise<void> {
  const port = await freePort();
  healthPorts.push(port);
  agents.push(startLoopbackAgent(collector.grpcAddress, node, port, [], env));
}

/** Command lines of the processes our agents started (other checkouts' labs run iperf3 on this machine too). */
function ownTools(): string {
  const ours = new Set(agents.map((a) => String(a.child.pid)));
  return execFileSync('ps', ['-eo', 'ppid=,args='])
    .toString()
    .split('\n')
    .filter((l) => ours.has(l.trim().split(/\s+/)[0] ?? ''))
    .join('\n');
}

async function runUntilEnd(id: string, timeoutMs = 60_000): Promise<any> {
  return waitFor(
    `run ${id} to end`,
    async () => {
      const r = await getJson(`${collector.httpUrl}/v1/runs/${id}`);
      return ['succeeded', 'failed', 'cancelled', 'interrupted'].includes(r.body.state) ? r.body : undefined;
    },
    timeoutMs,
    200,
  );
}

before(async () => {
  collector = await startLoopbackCollector(createLogger({ test: 'grpc' }, 'warn'), { dbPath: join(tmp, 'c.db') });
  await startAgent('node-a');
  await startAgent('node-b');
  // node-c has iperf3 and nothing else on its PATH.
  const bin = join(tmp, 'bin');
  execFileSync('mkdir', ['-p', bin]);
  symlinkSync(execFileSync('sh', ['-c', 'command -v iperf3']).toString().trim(), join(bin, 'iperf3'));
  await startAgent('node-c', { PATH: bin });
  await waitFor(
    'three connected agents',
    async () =>
      (await getJson(`${collector.httpUrl}/v1/agents`)).body.agents.filter((a: any) => a.connected).length === 3,
    // Generous: on a shared machine at load 40 three Node processes take far longer than 20 s to start.
    180_000,
  );
});

after(async () => {
  await Promise.all(agents.map((a) => stop(a)));
  await collector.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('agents register with node facts and the tools they found', async () => {
  const { body } = await getJson(`${collector.httpUrl}/v1/agents`);
  const a = body.agents.find((x: any) => x.nodeName === 'node-a');
  assert.equal(a.podIp, '127.0.0.1');
  assert.match(a.kernel, /^\d+\.\d+/);
  assert.ok(
    a.tools.some((t: string) => /^iperf3@3\./.test(t)),
    a.tools.join(','),
  );
  assert.ok(
    a.tools.some((t: string) => t.startsWith('wrk@')),
    a.tools.join(','),
  );
  const c = body.agents.find((x: any) => x.nodeName === 'node-c');
  assert.deepEqual(
    c.tools.map((t: string) => t.split('@')[0]),
    ['iperf3'],
  );
});

test('a real iperf3 job runs between two agents and lands in the report', async () => {
  const res = await getJson(`${collector.httpUrl}/v1/runs`, {
    method: 'POST',
    body: JSON.stringify({
      name: 'grpc',
      serverNode: 'node-a',
      clientNode: 'node-b',
      warmupSeconds: 0,
      durationSeconds: 1,
      measurements: [{ kind: 'throughput', path: 'pod-to-pod', streams: 2 }],
    }),
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const run = await runUntilEnd(res.body.id);
  assert.equal(run.state, 'succeeded', JSON.stringify(run));
  const report = (await getJson(`${collector.httpUrl}/v1/runs/${run.id}/report?format=json`)).body;
  const row = report.rows[0];
  assert.equal(row.tool, 'iperf3');
  assert.equal(row.unit, 'Gbit/s', JSON.stringify(row));
  assert.ok(row.value > 0, `throughput ${row.value}`);
  assert.equal(row.details.streams, 2);
  const md = (await getJson(`${collector.httpUrl}/v1/runs/${run.id}/report?format=md`)).body as string;
  assert.match(
    md,
    /\| TCP pod-to-pod 2 streams \| pod-to-pod \| iperf3 3\.\S+ \| (⚠ )?\d+\.\d\d \| Gbit\/s \| ±[\d.]+% \(n=\d+, CV [\d.]+%\) \| succeeded \|/,
  );
  const stored = collector.store.results(run.id);
  assert.ok(
    stored.some((r) => r.result.rawOutput.includes('"sum_received"')),
    'raw iperf3 JSON is kept',
  );
});

test('the gRPC RunService and grpc.health.v1 answer from the same collector', async () => {
  const client = new RunServiceClient(collector.grpcAddress, credentials.createInsecure());
  const runs = await new Promise<Run[]>((resolve, reject) =>
    client.listRuns({ limit: 10 }, (err, r) => (err ? reject(err) : resolve(r.runs))),
  );
  const viaRest = (await getJson(`${collector.httpUrl}/v1/runs?limit=10`)).body.runs;
  assert.deepEqual(
    runs.map((r) => [r.id, r.state]),
    viaRest.map((r: any) => [r.id, r.state]),
  );
  const err = await new Promise<ServiceError>((resolve) =>
    client.createRun(
      { scenarioJson: JSON.stringify({ measurements: [{ kind: 'throughput', path: 'pod-to-pod', streams: 0 }] }) },
      (e) => resolve(e as ServiceError),
    ),
  );
  assert.equal(err.code, 3);
  assert.match(err.details, /measurements\[0\]\.streams/);
  assert.deepEqual(err.metadata.get('cni-bench-error-code'), ['E_VALIDATION']);
  client.close();
  const Health = makeGenericClientConstructor(healthService, 'grpc.health.v1.Health');
  const health = new Health(collector.grpcAddress, credentials.createInsecure()) as any;
  const status = await new Promise<any>((resolve, reject) =>
    health.check({ service: 'cnibench.v1.AgentService' }, new Metadata(), (e: Error, r: unknown) =>
      e ? reject(e) : resolve(r),
    ),
  );
  assert.equal(status.status, 'SERVING');
  health.close();
});

test('bad input gets 400 naming the field; a tool missing on the chosen node gets 422 naming it', async () => {
  const post = (body: string) => getJson(`${collector.httpUrl}/v1/runs`, { method: 'POST', body });
  let r = await post(JSON.stringify({ measurements: [{ kind: 'throughput', path: 'nowhere' }] }));
  assert.equal(r.status, 400);
  assert.equal(r.body.code, 'E_VALIDATION');
  assert.match(r.body.message, /measurements\[0\]\.path/);
  r = await post(JSON.stringify({ measurements: [{ kind: 'http', path: 'pod-to-pod', tool: 'ab' }] }));
  assert.equal(r.status, 400);
  assert.match(r.body.message, /measurements\[0\]\.tool/);
  r = await post('{"measurements": [');
  assert.equal(r.status, 400);
  assert.match(r.body.message, /body: not valid JSON/);
  r = await post(JSON.stringify({ measurements: [{ kind: 'http', path: 'service' }] }));
  assert.equal(r.status, 400);
  assert.match(r.body.message, /measurements\[0\]\.path: 'service' needs a service frontend/);
  r = await post(
    JSON.stringify({
      serverNode: 'node-a',
      clientNode: 'node-c',
      measurements: [{ kind: 'http', path: 'pod-to-pod' }],
    }),
  );
  assert.equal(r.status, 422);
  assert.equal(r.body.code, 'E_TOOL_MISSING');
  assert.match(r.body.message, /tool 'wrk' is not installed on node 'node-c'/);
  r = await post(JSON.stringify({ serverNode: 'node-z', measurements: [{ kind: 'throughput', path: 'pod-to-pod' }] }));
  assert.equal(r.status, 422);
  assert.match(r.body.message, /serverNode: no connected agent on node 'node-z'/);
  assert.equal((await getJson(`${collector.httpUrl}/v1/runs/nope`)).status, 404);
});

test('DELETE cancels a running run and the agents stop its processes', async () => {
  const res = await getJson(`${collector.httpUrl}/v1/runs`, {
    method: 'POST',
    body: JSON.stringify({
      serverNode: 'node-a',
      clientNode: 'node-b',
      warmupSeconds: 0,
      durationSeconds: 60,
      measurements: [{ kind: 'throughput', path: 'pod-to-pod' }],
    }),
  });
  assert.equal(res.status, 201);
  await waitFor('iperf3 client running', () => ownTools().includes('iperf3 -c 127.0.0.1'), 10_000);
  const second = await getJson(`${collector.httpUrl}/v1/runs`, {
    method: 'POST',
    body: JSON.stringify({ measurements: [{ kind: 'throughput', path: 'pod-to-pod' }] }),
  });
  assert.equal(second.status, 409, 'runs are exclusive');
  assert.match(second.body.message, new RegExp(`run '${res.body.id}' is in progress`));
  const del = await getJson(`${collector.httpUrl}/v1/runs/${res.body.id}`, { method: 'DELETE' });
  assert.equal(del.status, 202, 'answered at once; the agents clean up in the background');
  const ended = await runUntilEnd(res.body.id);
  assert.equal(ended.state, 'cancelled');
  assert.equal(ended.phases[0].state, 'cancelled');
  await waitFor('no iperf3 left', () => !/\biperf3 -[cs]\b/.test(ownTools()), 10_000);
  for (const port of healthPorts) {
    await waitFor(
      `agent on ${port} idle`,
      async () => (await getJson(`http://127.0.0.1:${port}/healthz`)).body.runningJobs === 0,
      10_000,
    );
  }
  const again = await getJson(`${collector.httpUrl}/v1/runs/${res.body.id}`, { method: 'DELETE' });
  assert.equal(again.status, 409);
});

test('metrics are exposed with the cni_bench_ prefix', async () => {
  const text = (await getJson(`${collector.httpUrl}/metrics`)).body as string;
  assert.match(text, /^cni_bench_agents_connected 3$/m);
  assert.match(text, /^cni_bench_runs_total\{state="succeeded"\} [1-9]/m);
  assert.match(text, /^cni_bench_agent_messages_total\{type="result",outcome="stored"\} [1-9]/m);
});
