/**
 * The collector is killed (SIGKILL) and restarted while agents are connected
 * and a run is in progress: agents are back within 5 s, the run is marked
 * interrupted with a reason, its jobs are cancelled on the agents, and results
 * stored before the crash survive.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { connectedAgents, restartableCollectorArgs } from '../support/helpers/collector-main.js';
import { startLoopbackAgent } from '../support/helpers/loopback.js';
import { anyDescendant } from '../support/helpers/own-processes.js';
import { COLLECTOR_MAIN, freePort, getJson, type Proc, startNode, stop, waitFor } from '../support/helpers/procs.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-restart-'));
const procs: Proc[] = [];

after(async () => {
  await Promise.all(procs.map((p) => stop(p)));
  rmSync(tmp, { recursive: true, force: true });
});

test('agents survive a collector crash and the interrupted run is never left running', async () => {
  const grpcPort = await freePort();
  const httpPort = await freePort();
  const base = `http://127.0.0.1:${httpPort}`;
  const collectorArgs = restartableCollectorArgs({
    grpcListen: `127.0.0.1:${grpcPort}`,
    httpPort,
    db: join(tmp, 'c.db'),
    livenessMs: 3000,
  });
  let collector = startNode(COLLECTOR_MAIN, collectorArgs);
  procs.push(collector);
  const health: number[] = [];
  const agentPids: number[] = [];
  // iperf3 processes this test's agents started (other checkouts' labs may run iperf3 on the same machine).
  const ownIperf3 = (pattern: RegExp): Promise<boolean> => anyDescendant(pattern, agentPids);
  for (const node of ['node-a', 'node-b']) {
    const hp = await freePort();
    health.push(hp);
    const agent = startLoopbackAgent(`127.0.0.1:${grpcPort}`, node, hp);
    procs.push(agent);
    if (agent.child.pid !== undefined) agentPids.push(agent.child.pid);
  }
  const connected = async () => (await connectedAgents(base)) === 2;
  // Generous: at load 40 the collector and two agents take far longer than 20 s to start.
  await waitFor('agents connected', connected, 180_000);

  const scenario = (seconds: number) =>
    JSON.stringify({
      serverNode: 'node-a',
      clientNode: 'node-b',
      warmupSeconds: 0,
      durationSeconds: seconds,
      measurements: [{ kind: 'throughput', path: 'pod-to-pod' }],
    });
  const first = (await getJson(`${base}/v1/runs`, { method: 'POST', body: scenario(1) })).body;
  await waitFor(
    'first run done',
    async () => (await getJson(`${base}/v1/runs/${first.id}`)).body.state === 'succeeded',
    30_000,
  );
  const before = (await getJson(`${base}/v1/runs/${first.id}/report`)).body.rows[0].value;
  assert.ok(before > 0);

  const second = (await getJson(`${base}/v1/runs`, { method: 'POST', body: scenario(60) })).body;
  await waitFor('iperf3 client running', () => ownIperf3(/iperf3 -c 127\.0\.0\.1/), 10_000);

  collector.child.kill('SIGKILL');
  await collector.exited;
  const t0 = Date.now();
  collector = startNode(COLLECTOR_MAIN, collectorArgs);
  procs.push(collector);
  await waitFor('agents back', connected, 15_000, 50);
  const backMs = Date.now() - t0;
  // Agents retry with a backoff of at most 2 s; the rest is the collector's own start (about 1 s on a quiet machine).
  assert.ok(backMs < 10_000, `agents took ${backMs} ms to come back`);

  const run = (await getJson(`${base}/v1/runs/${second.id}`)).body;
  assert.equal(run.state, 'interrupted');
  assert.match(run.reason, /collector restarted/);
  assert.equal(run.phases[0].state, 'interrupted');

  // The restarted collector does not know the run, so the agents are told to cancel its jobs.
  for (const hp of health)
    await waitFor(
      `agent ${hp} idle`,
      async () => (await getJson(`http://127.0.0.1:${hp}/healthz`)).body.runningJobs === 0,
      10_000,
    );
  await waitFor('no iperf3 left', async () => !(await ownIperf3(/\biperf3 -[cs]\b/)), 10_000);

  const after = (await getJson(`${base}/v1/runs/${first.id}/report`)).body.rows[0].value;
  assert.equal(after, before);
  const third = (await getJson(`${base}/v1/runs`, { method: 'POST', body: scenario(1) })).body;
  await waitFor(
    'a new run works after the restart',
    async () => (await getJson(`${base}/v1/runs/${third.id}`)).body.state === 'succeeded',
    30_000,
  );
  process.stdout.write(`# agents reconnected ${backMs} ms after the collector restart\n`);
});
