/**
 * Faults during a run, each with the real collector and real agents (real
 * gRPC, real iperf3 on 127.0.0.1): an agent SIGKILLed mid-phase; the collector
 * SIGKILLed mid-run and restarted on the same database; the agents' link to
 * the collector down for 30 s mid-run (the agents in a network namespace of
 * their own, joined to the collector by a veth pair whose host end is set
 * down); the collector unreachable for 30 s mid-run (SIGSTOP, then SIGCONT:
 * the agents' streams stall as behind a dead link, though the collector's
 * clock stops too); the store's filesystem full (a 4 MiB tmpfs). Each ends in
 * a clear state, keeps what was acknowledged, and leaves no process,
 * namespace, mount or file behind.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectedAgents, restartableCollectorArgs } from '../support/helpers/collector-main.js';
import { loopbackAgentArgs } from '../support/helpers/loopback.js';
import { anyDescendant, descendantsMatching } from '../support/helpers/own-processes.js';
import {
  AGENT_MAIN,
  COLLECTOR_MAIN,
  freePort,
  getJson,
  type Proc,
  startNode,
  stop,
  waitFor,
} from '../support/helpers/procs.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-faults-'));
const procs: Proc[] = [];
const mounts: string[] = [];
const netnses: string[] = [];

after(async () => {
  await Promise.all(procs.map((p) => stop(p, 'SIGKILL')));
  for (const ns of netnses) {
    try {
      execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
    } catch {
      // Deleted by its test.
    }
  }
  for (const m of mounts) {
    try {
      execFileSync('umount', [m], { stdio: 'ignore' });
    } catch {
      // Already unmounted by its test.
    }
  }
  rmSync(tmp, { recursive: true, force: true });
});

interface Setup {
  base: string;
  collector: Proc;
  collectorArgs: string[];
  agents: Map<string, { proc: Proc; health: number; args: string[] }>;
  /** Whether any of the given agent pids' descendants runs a command matching `pattern`. */
  ownTools(pattern: RegExp, pids?: number[]): Promise<boolean>;
  agentPids(): number[];
  restartCollector(): Proc;
  startAgent(node: string): Proc;
}

async function setup(name: string, db: string, extra: string[] = []): Promise<Setup> {
  const grpcPort = await freePort();
  const httpPort = await freePort();
  const collectorArgs = restartableCollectorArgs(
    { grpcListen: `127.0.0.1:${grpcPort}`, httpPort, db, livenessMs: 4000 },
    extra,
  );
  const s: Setup = {
    base: `http://127.0.0.1:${httpPort}`,
    collector: startNode(COLLECTOR_MAIN, collectorArgs),
    collectorArgs,
    agents: new Map(),
    ownTools: (pattern, pids = s.agentPids()) => anyDescendant(pattern, pids),
    agentPids: () => [...s.agents.values()].flatMap((a) => (a.proc.child.pid ? [a.proc.child.pid] : [])),
    restartCollector() {
      s.collector = startNode(COLLECTOR_MAIN, collectorArgs);
      procs.push(s.collector);
      return s.collector;
    },
    startAgent(node) {
      const prev = s.agents.get(node);
      const args = prev?.args ?? [];
      const proc = startNode(AGENT_MAIN, args);
      procs.push(proc);
      s.agents.set(node, { proc, health: prev?.health ?? 0, args });
      return proc;
    },
  };
  procs.push(s.collector);
  for (const node of [`${name}-a`, `${name}-b`]) {
    const health = await freePort();
    const args = loopbackAgentArgs(`127.0.0.1:${grpcPort}`, node, health);
    s.agents.set(node, { proc: startNode(AGENT_MAIN, args), health, args });
    procs.push(s.agents.get(node)!.proc);
  }
  await waitFor('agents connected', () => connected(s, 2), 60_000);
  return s;
}

async function connected(s: Setup, n: number): Promise<boolean> {
  return (await connectedAgents(s.base)) === n;
}

const scenario = (name: string, seconds: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    name: `faults-${name}`,
    serverNode: `${name}-a`,
    clientNode: `${name}-b`,
    warmupSeconds: 0,
    durationSeconds: seconds,
    rounds: 1,
    measurements: [{ kind: 'throughput', path: 'pod-to-pod' }],
    ...extra,
  });

async function post(s: Setup, body: string): Promise<{ status: number; body: any }> {
  return getJson(`${s.base}/v1/runs`, { method: 'POST', body });
}

async function ended(s: Pick<Setup, 'base'>, id: string, timeoutMs: number): Promise<any> {
  return waitFor(
    `run ${id} ended`,
    async () => {
      const r = (await getJson(`${s.base}/v1/runs/${id}`)).body;
      return ['succeeded', 'failed', 'cancelled', 'interrupted'].includes(r.state) ? r : undefined;
    },
    timeoutMs,
    200,
  );
}

async function idle(s: Setup): Promise<void> {
  for (const [node, a] of s.agents) {
    if (a.proc.child.exitCode !== null || a.proc.child.signalCode !== null) continue;
    await waitFor(
      `agent ${node} idle`,
      async () => (await getJson(`http://127.0.0.1:${a.health}/healthz`)).body.runningJobs === 0,
      20_000,
    );
  }
  await waitFor('no iperf3 left', async () => !(await s.ownTools(/\biperf3 -[cs]\b/)), 20_000);
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('an agent SIGKILLed mid-phase: the run fails naming it, the other agent stops its server, nothing is left', async () => {
  const s = await setup('fk', join(tmp, 'kill-agent.db'));
  const run = (await post(s, scenario('fk', 60))).body;
  await waitFor('iperf3 client running', () => s.ownTools(/iperf3 -c 127\.0\.0\.1/), 20_000);
  const victim = s.agents.get('fk-b')!;
  const orphans = await descendantsMatching(/\biperf3 -c\b/, [victim.proc.child.pid!]);
  victim.proc.child.kill('SIGKILL');
  await victim.proc.exited;
  const t0 = Date.now();
  const r = await ended(s, run.id, 60_000);
  const tookMs = Date.now() - t0;
  assert.equal(r.state, 'failed');
  assert.match(r.reason, /fk-b/, 'the reason names the lost agent');
  assert.equal(r.phases[0].state, 'failed');
  await idle(s);
  // The killed agent's iperf3 client loses its server and exits; none outlives the test.
  await waitFor('the killed agent\u2019s iperf3 gone', () => orphans.every((p) => !alive(p)), 30_000);
  s.startAgent('fk-b');
  await waitFor('the agent is back', () => connected(s, 2), 30_000);
  const next = (await post(s, scenario('fk', 1))).body;
  assert.equal((await ended(s, next.id, 60_000)).state, 'succeeded', 'the next run works');
  process.stdout.write(`# agent killed: run ${r.state} ${tookMs} ms later: ${r.reason}\n`);
});

test('the collector SIGKILLed mid-run and restarted on the same database: interrupted, nothing acknowledged lost', async () => {
  const db = join(tmp, 'kill-collector.db');
  const s = await setup('fc', db);
  // Three measured 3 s rounds with samples every 500 ms: results and samples are committed while the run goes on.
  const run = (await post(s, scenario('fc', 3, { rounds: 3, sampleIntervalMs: 500 }))).body;
  const count = (sql: string): number => {
    const d = new DatabaseSync(db, { readOnly: true });
    try {
      return Number((d.prepare(sql).get(run.id) as { n: number }).n);
    } finally {
      d.close();
    }
  };
  await waitFor(
    'a result committed',
    () => count('SELECT count(*) AS n FROM results WHERE run_id = ?') >= 1,
    60_000,
    100,
  );
  s.collector.child.kill('SIGKILL');
  await s.collector.exited;
  // What the dead collector had committed: everything it ever acknowledged is in here (acks follow commits).
  const results = count('SELECT count(*) AS n FROM results WHERE run_id = ?');
  const samples = count('SELECT count(*) AS n FROM samples WHERE run_id = ?');
  const check = new DatabaseSync(db, { readOnly: true });
  assert.equal(Object.values(check.prepare('PRAGMA integrity_check').get() as object)[0], 'ok');
  check.close();
  s.restartCollector();
  await waitFor('agents back', () => connected(s, 2), 30_000);
  const r = (await getJson(`${s.base}/v1/runs/${run.id}`)).body;
  assert.equal(r.state, 'interrupted');
  assert.match(r.reason, /collector restarted/);
  assert.ok(
    r.phases.every((p: any) => ['succeeded', 'interrupted'].includes(p.state)),
    JSON.stringify(r.phases),
  );
  await idle(s);
  // Everything committed before the crash is still there; the agents' resends of what was never acknowledged
  // were refused (the run is not live), not stored twice.
  await sleep(2000);
  assert.equal(count('SELECT count(*) AS n FROM results WHERE run_id = ?'), results);
  assert.equal(count('SELECT count(*) AS n FROM samples WHERE run_id = ?'), samples);
  const report = await getJson(`${s.base}/v1/runs/${run.id}/report`);
  assert.equal(report.status, 200);
  process.stdout.write(`# collector SIGKILLed: ${results} results and ${samples} samples kept; run ${r.state}\n`);
});

test('the collector unreachable for 30 s mid-run (SIGSTOP): agents hold their samples and resend them, the run ends clearly', async () => {
  const db = join(tmp, 'stop.db');
  const s = await setup('fs', db);
  const run = (await post(s, scenario('fs', 45, { sampleIntervalMs: 1000 }))).body;
  await waitFor('iperf3 client running', () => s.ownTools(/iperf3 -c 127\.0\.0\.1/), 20_000);
  await sleep(3000);
  s.collector.child.kill('SIGSTOP');
  const stoppedAt = Date.now();
  await sleep(30_000);
  s.collector.child.kill('SIGCONT');
  const resumedAt = Date.now();
  await waitFor('agents back', () => connected(s, 2), 30_000);
  const r = await ended(s, run.id, 120_000);
  // The agents kept measuring meanwhile; their outboxes held the samples of the outage and resent them.
  const d = new DatabaseSync(db, { readOnly: true });
  const times = (
    d.prepare('SELECT time_ms AS t FROM samples WHERE run_id = ? ORDER BY time_ms').all(run.id) as { t: number }[]
  ).map((x) => x.t);
  d.close();
  const during = times.filter((t) => t > stoppedAt + 2000 && t < resumedAt - 2000).length;
  assert.ok(during >= 20, `samples taken during the outage and stored after it: ${during}`);
  assert.equal(r.state, 'succeeded', `${r.state}: ${r.reason}`);
  await idle(s);
  process.stdout.write(
    `# collector stopped 30 s: run ${r.state}; ${during} samples from the outage stored after it (of ${times.length})\n`,
  );
});

test('the store\u2019s filesystem full: runs are refused or end failed with one line naming the path; the collector lives on', async () => {
  const disk = join(tmp, 'disk');
  mkdirSync(disk);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'cni-bench-test', disk]);
  mounts.push(disk);
  const db = join(disk, 'c.db');
  const s = await setup('fd', db);
  const first = (await post(s, scenario('fd', 1, { sampleIntervalMs: 200 }))).body;
  assert.equal((await ended(s, first.id, 60_000)).state, 'succeeded', 'a run fits before the disk fills');
  const filler = join(disk, 'filler');
  /** Fills what is left of the filesystem, to the last block. */
  const fill = (): void => {
    const fd = openSync(filler, 'a');
    try {
      for (const size of [64 * 1024, 4096, 512]) {
        const chunk = Buffer.alloc(size, 1);
        try {
          for (;;) writeSync(fd, chunk);
        } catch (err) {
          assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
        }
      }
    } finally {
      closeSync(fd);
    }
  };
  // The disk fills while a run stores samples every 100 ms: the run ends failed with the store's line.
  const during = (await post(s, scenario('fd', 30, { sampleIntervalMs: 100, name: 'fills' }))).body;
  await waitFor('iperf3 client running', () => s.ownTools(/iperf3 -c 127\.0\.0\.1/), 20_000);
  fill();
  const failed = await ended(s, during.id, 120_000);
  assert.equal(failed.state, 'failed', `${failed.state}: ${failed.reason}`);
  assert.match(failed.reason, /store: cannot write '.*c\.db'.*free space/);
  assert.equal(failed.reason.split('\n').length, 1, 'one line');
  await idle(s);
  const outcomes: string[] = [`mid-run: ${failed.state} (${failed.reason.slice(0, 160)})`];
  fill();
  // A new run on the full disk: refused at once (507), or ended failed the same way.
  for (let i = 0; i < 2; i++) {
    const res = await post(s, scenario('fd', 10, { sampleIntervalMs: 100, name: `full-${i}` }));
    if (res.status === 507) {
      assert.equal(res.body.code, 'E_STORE');
      assert.ok(res.body.message.includes(`'${db}'`), res.body.message);
      assert.match(res.body.message, /free space/);
      outcomes.push('new run: refused 507');
      continue;
    }
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const r = await ended(s, res.body.id, 120_000);
    assert.equal(r.state, 'failed', `${r.state}: ${r.reason}`);
    assert.match(r.reason, /store: cannot write '.*c\.db'.*free space/);
    outcomes.push('new run: ended failed');
    await idle(s);
  }
  assert.equal((await getJson(`${s.base}/healthz`)).status, 200, 'the collector lives on');
  assert.equal(s.collector.child.exitCode, null);
  assert.doesNotMatch(s.collector.output(), /\n\s+at /, 'no stack in its log');
  const storeLines = s.collector
    .output()
    .split('\n')
    .filter((l) => /store/.test(l) && /error/.test(l));
  assert.ok(
    storeLines.length > 0,
    `the failure is logged (${outcomes.join(', ')}): ${s.collector.output().slice(-1500)}`,
  );
  // Space again: runs work again, and the failed run's end state reaches the disk.
  rmSync(filler);
  const again = (await post(s, scenario('fd', 1))).body;
  assert.equal((await ended(s, again.id, 60_000)).state, 'succeeded');
  await idle(s);
  const d = new DatabaseSync(db, { readOnly: true });
  assert.equal((d.prepare('SELECT state FROM runs WHERE id = ?').get(during.id) as { state: string }).state, 'failed');
  d.close();
  await stop(s.collector);
  for (const a of s.agents.values()) await stop(a.proc);
  execFileSync('umount', [disk]);
  mounts.splice(mounts.indexOf(disk), 1);
  process.stdout.write(`# disk full: ${outcomes.join(', ')}; e.g. ${storeLines[0]?.slice(0, 300)}\n`);
});

/** `node <script> args` inside network namespace `ns` (ip netns exec execs it: the pid is node's). */
function startInNs(ns: string, script: string, args: string[]): Proc {
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '--enable-source-maps', script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stdout?.on('data', (d: string) => (out += d));
  child.stderr?.on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, sig) => resolve(code ?? (sig ? 128 : null))),
  );
  return { child, output: () => out, stdout: () => out, exited };
}

test('the agents\u2019 link to the collector down for 30 s mid-run: they hold their samples, resend them, the run succeeds', async () => {
  const ns = `cnibf-${process.pid}`;
  const hostIf = `cnibf${process.pid}h`.slice(0, 15);
  const nsIf = `cnibf${process.pid}n`.slice(0, 15);
  // A /30 of 198.18.126.0/24 (no lab or harness range) chosen by pid: only these two ends use it.
  const base = 4 * (process.pid % 63) + 4;
  const hostIp = `198.18.126.${base + 1}`;
  const nsIp = `198.18.126.${base + 2}`;
  const ip = (...a: string[]) => execFileSync('ip', a, { stdio: ['ignore', 'ignore', 'pipe'] });
  ip('netns', 'add', ns);
  netnses.push(ns);
  ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf, 'netns', ns);
  ip('addr', 'add', `${hostIp}/30`, 'dev', hostIf);
  ip('link', 'set', hostIf, 'up');
  ip('-n', ns, 'addr', 'add', `${nsIp}/30`, 'dev', nsIf);
  ip('-n', ns, 'link', 'set', nsIf, 'up');
  ip('-n', ns, 'link', 'set', 'lo', 'up');
  const grpcPort = await freePort();
  const httpPort = await freePort();
  const db = join(tmp, 'link.db');
  // A liveness timeout above the outage: the run is meant to ride it out (with the default 10 s the agents are
  // declared lost and the run fails naming them, as the first test shows for a killed agent).
  const collector = startNode(
    COLLECTOR_MAIN,
    restartableCollectorArgs({ grpcListen: `${hostIp}:${grpcPort}`, httpPort, db, livenessMs: 45_000 }, [
      '--insecure',
      'true',
    ]),
  );
  procs.push(collector);
  const rest = `http://127.0.0.1:${httpPort}`;
  const agents: { proc: Proc; health: number }[] = [];
  for (const node of ['fl-a', 'fl-b']) {
    const health = await freePort();
    const proc = startInNs(ns, AGENT_MAIN, loopbackAgentArgs(`${hostIp}:${grpcPort}`, node, health));
    procs.push(proc);
    agents.push({ proc, health });
  }
  const connectedAll = async () => (await connectedAgents(rest)) === 2;
  await waitFor('agents connected across the veth', connectedAll, 60_000);
  const pids = agents.map((a) => a.proc.child.pid!);
  const own = (pattern: RegExp) => anyDescendant(pattern, pids);
  const run = (
    await getJson(`${rest}/v1/runs`, {
      method: 'POST',
      body: JSON.stringify({
        name: 'faults-link',
        serverNode: 'fl-a',
        clientNode: 'fl-b',
        warmupSeconds: 0,
        durationSeconds: 55,
        rounds: 1,
        sampleIntervalMs: 1000,
        measurements: [{ kind: 'throughput', path: 'pod-to-pod' }],
      }),
    })
  ).body;
  await waitFor('iperf3 client running', () => own(/iperf3 -c 127\.0\.0\.1/), 30_000);
  await sleep(3000);
  ip('link', 'set', hostIf, 'down');
  const downAt = Date.now();
  await sleep(30_000);
  ip('link', 'set', hostIf, 'up');
  const upAt = Date.now();
  // The collector's registry may still call them connected (nothing told it the link died): the proof is the
  // outage's samples arriving.
  const outageSamples = (): number => {
    const d = new DatabaseSync(db, { readOnly: true });
    try {
      return Number(
        (
          d
            .prepare('SELECT count(*) AS n FROM samples WHERE run_id = ? AND time_ms > ? AND time_ms < ?')
            .get(run.id, downAt + 2000, upAt - 2000) as { n: number }
        ).n,
      );
    } finally {
      d.close();
    }
  };
  await waitFor('the outage\u2019s samples stored', () => outageSamples() >= 20, 60_000, 100);
  const backMs = Date.now() - upAt;
  const r = await ended({ base: rest }, run.id, 120_000);
  const d = new DatabaseSync(db, { readOnly: true });
  const times = (
    d.prepare('SELECT time_ms AS t FROM samples WHERE run_id = ? ORDER BY time_ms').all(run.id) as { t: number }[]
  ).map((x) => x.t);
  const results = Number((d.prepare('SELECT count(*) AS n FROM results WHERE run_id = ?').get(run.id) as any).n);
  d.close();
  const during = times.filter((t) => t > downAt + 2000 && t < upAt - 2000).length;
  assert.equal(r.state, 'succeeded', `${r.state}: ${r.reason}`);
  assert.ok(results >= 1, 'the iperf3 result, sent after the outage, is stored');
  assert.ok(during >= 20, `samples taken while the link was down, stored after it came back: ${during}`);
  for (const a of agents)
    await waitFor(
      'agent idle',
      async () => (await getJson(`http://${nsIp}:${a.health}/healthz`)).body.runningJobs === 0,
      20_000,
    );
  await waitFor('no iperf3 left', async () => !(await own(/\biperf3 -[cs]\b/)), 20_000);
  for (const a of agents) await stop(a.proc);
  await stop(collector);
  ip('netns', 'del', ns);
  netnses.splice(netnses.indexOf(ns), 1);
  assert.throws(() => ip('link', 'show', hostIf), 'the veth pair went with the namespace');
  process.stdout.write(
    `# link down 30 s: run ${r.state}; the outage's samples stored ${backMs} ms after link up; ${during} samples from the outage stored after it (of ${times.length})\n`,
  );
});
