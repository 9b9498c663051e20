/**
 * The attacks of issue 20 against the real collector on port 0, with real
 * agent processes beside a scripted attacker (test/support/helpers/sim-agent.ts), once
 * with node tokens over plaintext gRPC and once with per-node certificates over
 * mutual TLS: impersonating a node (register and session), forging results and
 * samples, poisoning sequence numbers, and driving RunService/MonitorService
 * without an operator credential. Each is refused and nothing forged is kept.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { type ChannelCredentials, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { nodeToken } from '../../collector/auth/principal.js';
import type { Collector } from '../../collector/listen.js';
import { createLogger } from '../../core/log.js';
import { MonitorServiceClient } from '../../gen/cnibench/v1/monitor.js';
import { RunServiceClient } from '../../gen/cnibench/v1/run.js';
import { startLoopbackAgent, startLoopbackCollector } from '../support/helpers/loopback.js';
import { freePort, getJson, type Proc, stop, waitFor } from '../support/helpers/procs.js';
import { isServiceError, SimAgent } from '../support/helpers/sim-agent.js';
import { TestCerts } from '../support/helpers/test-certs.js';

const certs = new TestCerts('cnib-ident-');
const file = (n: string): string => certs.file(n);
const OPERATOR = 'operator-token-for-identity-tests';
const KEY = `${'k'.repeat(16)}identity-test-agent-key-0123456789`;
const log = createLogger({ test: 'identity' }, 'error');
const procs: Proc[] = [];

before(() => {
  certs.ca('ca');
  certs.leaf('server', 'ca', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  for (const n of ['node-a', 'node-b', 'evil'])
    certs.leaf(n, 'ca', 'extendedKeyUsage=clientAuth\n', `/O=cni-bench-agent/CN=${n}`);
  certs.leaf('operator', 'ca', 'extendedKeyUsage=clientAuth\n', '/O=cni-bench-operator/CN=alice');
  // What the chart's generate mode used to hand every agent: signed, but nobody's.
  certs.leaf('shared', 'ca', 'extendedKeyUsage=clientAuth\n', '/CN=cni-bench-agent');
  writeFileSync(file('operator-token'), OPERATOR);
  writeFileSync(file('agent-key'), KEY);
  for (const n of ['node-a', 'node-b', 'evil']) writeFileSync(file(`${n}.token`), nodeToken(Buffer.from(KEY), n));
});

after(async () => {
  await Promise.all(procs.map((p) => stop(p)));
  certs.remove();
});

/** How a caller proves who it is in one mode: channel credentials and an optional bearer token. */
interface Creds {
  creds: ChannelCredentials;
  token?: string;
}

interface Mode {
  name: string;
  config: Record<string, string>;
  agentArgs: (node: string) => string[];
  /** An agent identity for `node`. */
  as: (node: string) => Creds;
  operator: Creds;
  /** Reaches the port but proves nothing. */
  nobody: Creds;
}

const tlsCreds = (cert?: string): ChannelCredentials =>
  cert
    ? credentials.createSsl(
        Buffer.from(execFileSync('cat', [file('ca.crt')])),
        execFileSync('cat', [file(`${cert}.key`)]),
        execFileSync('cat', [file(`${cert}.crt`)]),
      )
    : credentials.createSsl(execFileSync('cat', [file('ca.crt')]));

const MODES: Mode[] = [
  {
    name: 'node tokens over plaintext gRPC (no mTLS)',
    config: { restTokenFile: file('operator-token'), agentKeyFile: file('agent-key') },
    agentArgs: (n) => ['--token-file', file(`${n}.token`)],
    as: (n) => ({ creds: credentials.createInsecure(), token: nodeToken(Buffer.from(KEY), n) }),
    operator: { creds: credentials.createInsecure(), token: OPERATOR },
    nobody: { creds: credentials.createInsecure() },
  },
  {
    name: 'per-node certificates over mutual TLS',
    config: { tlsCertFile: file('server.crt'), tlsKeyFile: file('server.key'), tlsCaFile: file('ca.crt') },
    agentArgs: (n) => [
      '--tls-ca-file',
      file('ca.crt'),
      '--tls-cert-file',
      file(`${n}.crt`),
      '--tls-key-file',
      file(`${n}.key`),
    ],
    as: (n) => ({ creds: tlsCreds(n) }),
    operator: { creds: tlsCreds('operator') },
    nobody: { creds: tlsCreds('shared') },
  },
];

function md(c: Creds): Metadata {
  const m = new Metadata();
  if (c.token) m.set('authorization', `Bearer ${c.token}`);
  return m;
}

function listRuns(address: string, c: Creds): Promise<ServiceError | number> {
  const client = new RunServiceClient(address, c.creds);
  return new Promise((resolve) =>
    client.listRuns({ limit: 5 }, md(c), { deadline: Date.now() + 60_000 }, (e, r) => {
      client.close();
      resolve(e ?? r.runs.length);
    }),
  );
}

function createRun(address: string, c: Creds, scenario: unknown): Promise<ServiceError | { id: string }> {
  const client = new RunServiceClient(address, c.creds);
  return new Promise((resolve) =>
    client.createRun({ scenarioJson: JSON.stringify(scenario) }, md(c), { deadline: Date.now() + 60_000 }, (e, r) => {
      client.close();
      resolve(e ?? r);
    }),
  );
}

function getMonitor(address: string, c: Creds): Promise<ServiceError | 'ok'> {
  const client = new MonitorServiceClient(address, c.creds);
  return new Promise((resolve) =>
    client.getMonitor({}, md(c), { deadline: Date.now() + 60_000 }, (e) => {
      client.close();
      resolve(e ?? 'ok');
    }),
  );
}

for (const mode of MODES) {
  describe(mode.name, () => {
    let c: Collector;
    const sims: SimAgent[] = [];
    const sim = (cr: Creds): SimAgent => {
      const s = new SimAgent({ address: c.grpcAddress, creds: cr.creds, ...(cr.token ? { token: cr.token } : {}) });
      sims.push(s);
      return s;
    };
    const podIp = (node: string): string | undefined => c.registry.get(node)?.info.podIp;

    before(async () => {
      c = await startLoopbackCollector(log, { livenessTimeoutMs: 30_000, kubernetes: 'off', ...mode.config });
      for (const n of ['node-a', 'node-b']) {
        const p = startLoopbackAgent(c.grpcAddress, n, await freePort(), mode.agentArgs(n));
        procs.push(p);
      }
      await waitFor('both real agents connected', () => c.registry.available().length === 2, 180_000).catch(
        (err: Error) => {
          throw new Error(`${err.message}\n${procs.map((p) => p.output()).join('\n')}`);
        },
      );
    });
    after(async () => {
      for (const s of sims) s.close();
      await c.close();
    });

    test('impersonation: registering as another node is refused, and nothing of that node changes', async () => {
      const before = podIp('node-a');
      const asEvil = await sim(mode.as('evil')).register({
        nodeName: 'node-a',
        podIp: '203.0.113.66',
        instanceId: 'evil',
      });
      assert.ok(isServiceError(asEvil), 'refused');
      assert.equal(asEvil.code, 7, asEvil.details);
      assert.match(asEvil.details, /node_name: identity of node 'evil' cannot speak for node 'node-a'/);
      const anon = await sim(mode.nobody).register({ nodeName: 'node-a', podIp: '203.0.113.66', instanceId: 'evil' });
      assert.ok(isServiceError(anon) && anon.code === 16, isServiceError(anon) ? anon.details : 'accepted');
      assert.match(anon.details, /authorization: an agent identity is required/);
      const viaName = await sim(mode.as('evil')).register({
        nodeName: 'evil',
        agentName: 'node-a',
        instanceId: 'evil',
      });
      assert.ok(
        isServiceError(viaName) && /agent_name: /.test(viaName.details),
        'an agent name cannot borrow another node',
      );
      // One identity, three nodes: only its own is accepted.
      const multi = sim(mode.as('evil'));
      const results = await Promise.all(
        ['evil', 'node-x', 'node-y'].map((n) => multi.register({ nodeName: n, instanceId: 'evil' })),
      );
      assert.deepEqual(
        results.map((r) => !isServiceError(r)),
        [true, false, false],
      );
      assert.equal(podIp('node-a'), before);
      assert.equal(c.registry.get('node-a')?.connected, true);
    });

    test('impersonation: a Session hello for another node is refused and its jobs stay with it', async () => {
      const s = sim(mode.as('evil'));
      s.open('node-a', 'guess');
      await waitFor('the collector to end the session', () => s.ended, 60_000);
      assert.ok(s.ended !== 'end' && s.ended?.code === 7, JSON.stringify(s.ended));
      const anon = sim(mode.nobody);
      anon.open('node-a', 'guess');
      await waitFor('the collector to end the anonymous session', () => anon.ended, 60_000);
      assert.ok(anon.ended !== 'end' && anon.ended?.code === 16);
      // The evil node's own identity may open its own session, but not with another instance id.
      const own = sim(mode.as('evil'));
      await own.register({ nodeName: 'evil', instanceId: 'evil-1' });
      own.open('evil', 'evil-2');
      await waitFor('instance mismatch refused', () => own.ended, 60_000);
      assert.match((own.ended as ServiceError).details, /instance_id: /);
      assert.equal(c.registry.get('node-a')?.connected, true, 'the real node-a keeps its session');
    });

    test('forged results and samples: refused for jobs the sender does not own and runs not live', async () => {
      const run = await createRun(c.grpcAddress, mode.operator, {
        serverNode: 'node-a',
        clientNode: 'node-b',
        warmupSeconds: 0,
        durationSeconds: 30,
        measurements: [{ kind: 'throughput', path: 'pod-to-pod', tool: 'iperf3' }],
      });
      assert.ok(!isServiceError(run), isServiceError(run) ? run.details : '');
      const runId = run.id;
      await waitFor('the run to be live', () => c.orchestrator.isActive(runId), 60_000);
      const evil = sim(mode.as('evil'));
      await evil.register({ nodeName: 'evil', instanceId: 'forger' });
      evil.open('evil', 'forger');
      const forged = { tool: 'iperf3', toolVersion: 'forged', rawOutput: '{"forged":true}', startedMs: 1, endedMs: 2 };
      let seq = 0;
      for (let j = 1; j <= 5; j++)
        evil.send({
          seq: ++seq,
          body: { $case: 'result', value: { ...forged, jobId: `${runId}-j${j}`, runId } as any },
        });
      evil.send({
        seq: ++seq,
        body: { $case: 'result', value: { ...forged, jobId: 'x-j1', runId: 'r-unknown' } as any },
      });
      evil.send({
        seq: ++seq,
        body: {
          $case: 'sample',
          value: { runId, samplingJobId: `${runId}-j1`, timeMs: Date.now(), chains: [], errors: [] } as any,
        },
      });
      await waitFor('the forger\u2019s messages acknowledged (and refused)', () => evil.lastAck() === seq, 60_000);
      const del = await getJson(
        `${c.httpUrl}/v1/runs/${runId}`,
        mode.operator.token
          ? { method: 'DELETE', headers: { authorization: `Bearer ${OPERATOR}` } }
          : { method: 'DELETE' },
      );
      assert.equal(del.status, 202);
      await c.orchestrator.wait(runId);
      assert.deepEqual(
        c.store.results(runId).filter((r) => r.agentId === 'evil' || r.result.toolVersion === 'forged'),
        [],
      );
      assert.deepEqual(
        c.store.samples(runId).filter((s) => s.agentId === 'evil'),
        [],
      );
      assert.deepEqual(c.store.results('r-unknown'), []);
      const text = await c.registryMetrics();
      assert.match(text, /cni_bench_agent_messages_total\{type="result",outcome="refused"\} 6/);
    });

    test('sequence poisoning: a jump beyond the window is neither stored nor acknowledged, and later messages still are', async () => {
      const s = sim(mode.as('evil'));
      await s.register({ nodeName: 'evil', instanceId: 'poison' });
      s.open('evil', 'poison');
      const report = { $case: 'monitorReport' as const, value: { timeMs: Date.now(), probes: [] } as any };
      s.send({ seq: 1e15, body: report });
      s.send({ seq: 1, body: report });
      await waitFor('ack of the genuine message', () => s.lastAck() === 1, 60_000).catch((e: Error) => {
        throw new Error(`${e.message}: ${JSON.stringify(s.received)} ${JSON.stringify(s.ended)}`);
      });
      s.send({ seq: 2, body: report });
      await waitFor('ack of the next', () => s.lastAck() === 2, 60_000);
      assert.equal(c.registry.lastSeq('evil'), 2);
      assert.match(await c.registryMetrics(), /outcome="out-of-window"\} 1/);
    });

    test('RunService and MonitorService need an operator credential; an agent identity is not one', async () => {
      for (const [who, cr] of [
        ['nobody', mode.nobody],
        ['an agent', mode.as('node-a')],
      ] as const) {
        const list = await listRuns(c.grpcAddress, cr);
        assert.ok(isServiceError(list), `${who}: ListRuns refused`);
        assert.equal(list.code, who === 'nobody' ? 16 : 7, `${who}: ${list.details}`);
        assert.match(list.details, /authorization: /);
        const created = await createRun(c.grpcAddress, cr, {
          measurements: [{ kind: 'throughput', path: 'pod-to-pod' }],
        });
        assert.ok(isServiceError(created) && [7, 16].includes(created.code), `${who}: CreateRun refused`);
        const mon = await getMonitor(c.grpcAddress, cr);
        assert.ok(isServiceError(mon) && [7, 16].includes(mon.code), `${who}: GetMonitor refused`);
      }
      assert.equal(typeof (await listRuns(c.grpcAddress, mode.operator)), 'number');
      assert.equal(await getMonitor(c.grpcAddress, mode.operator), 'ok');
      if (mode.as('node-a').token) {
        const r = await getJson(`${c.httpUrl}/v1/runs`, {
          headers: { authorization: `Bearer ${mode.as('node-a').token}` },
        });
        assert.equal(r.status, 403, 'REST: an agent token is not the operator token');
      }
    });
  });
}
