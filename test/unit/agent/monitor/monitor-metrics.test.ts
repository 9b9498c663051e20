/**
 * A real collector and two real agents in monitoring mode on 127.0.0.1 (no
 * root, no namespaces): they probe each other, their /metrics and the
 * collector's pass `promtool check metrics`, REST /v1/monitor and gRPC
 * GetMonitor agree, and when one agent goes, the other's plan drops it and
 * its series for that peer are removed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { credentials } from '@grpc/grpc-js';
import { AgentMetrics } from '../../../../agent/monitor/metrics.js';
import type { Collector } from '../../../../collector/index.js';
import { createLogger } from '../../../../core/log.js';
import { MonitorServiceClient, type MonitorSnapshot } from '../../../../gen/cnibench/v1/monitor.js';
import { startLoopbackAgent, startLoopbackCollector } from '../../../support/helpers/loopback.js';
import { assertValidExposition, requirePromtool } from '../../../support/helpers/monitor-support.js';
import { freePort, getJson, type Proc, stop, waitFor } from '../../../support/helpers/procs.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-monitor-'));
let collector: Collector;
const agents = new Map<string, { proc: Proc; health: number }>();

async function startAgent(node: string): Promise<void> {
  const [health, probe] = [await freePort(), await freePort()];
  const args = ['--monitor', '--monitor-interval-s', '1', '--monitor-port', String(probe)];
  agents.set(node, {
    proc: startLoopbackAgent(collector.grpcAddress, node, health, args, { CNI_BENCH_LOG_LEVEL: 'warn' }),
    health,
  });
}

async function agentMetrics(node: string): Promise<string> {
  const a = agents.get(node);
  const r = await fetch(`http://127.0.0.1:${a?.health}/metrics`).catch((err: unknown) => {
    throw new Error(
      `agent ${node} /metrics: ${(err as Error).message}; agent exited ${a?.proc.child.exitCode}; output: ${a?.proc.output().slice(-2000)}`,
    );
  });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
  return r.text();
}

const monitor = async (): Promise<MonitorSnapshot> =>
  (await getJson(`${collector.httpUrl}/v1/monitor`)).body as MonitorSnapshot;

before(async () => {
  collector = await startLoopbackCollector(createLogger({ test: 'monitor' }, 'warn'), { dbPath: join(tmp, 'c.db') });
  await startAgent('node-a');
  await startAgent('node-b');
});

after(async () => {
  await Promise.all([...agents.values()].map((a) => stop(a.proc)));
  await collector.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('two monitoring agents probe each other and the collector shows the matrix', async () => {
  const s = await waitFor(
    'both directions ok in /v1/monitor',
    async () => {
      const m = await monitor();
      const ok = m.matrix.filter((c) => c.state === 'ok' && (c.type === 'tcp-connect' || c.type === 'tcp-rr'));
      return ok.length === 4 && m.nodes.every((n) => n.incomingSources.length === 1) ? m : undefined;
    },
    20_000,
    200,
  );
  assert.deepEqual(
    s.nodes.map((n) => [n.nodeName, n.state, n.peers]),
    [
      ['node-a', 'probing', ['node-b']],
      ['node-b', 'probing', ['node-a']],
    ],
  );
  assert.ok(s.nodes.every((n) => n.probedOk === 1 && n.incomingSources.length === 1));
  assert.ok(
    s.nodes.every((n) => n.dataplane && n.dataplane.timeMs > 0),
    'dataplane read',
  );
  assert.ok(
    s.matrix.every((c) => c.targetNode !== '' && !c.type.startsWith('host-')),
    'no Service, no host responder without a frontend and host namespace',
  );
  assert.ok((s.summary?.latency.find((l) => l.type === 'tcp-rr')?.p99Us ?? 0) > 0);
});

test("the agents' and the collector's /metrics are valid Prometheus exposition (promtool)", async () => {
  requirePromtool();
  const text = await waitFor(
    'node-a counts an incoming source',
    async () => {
      const t = await agentMetrics('node-a');
      return /^cni_bench_probe_incoming_sources\{node="node-a"\} 1$/m.test(t) ? t : undefined;
    },
    10_000,
    200,
  );
  assert.match(
    text,
    /^cni_bench_probe_duration_seconds_bucket\{le="0.00005",type="tcp-rr",source_node="node-a",target_node="node-b"\} \d+/m,
  );
  assert.match(text, /^cni_bench_probe_incoming_sources\{node="node-a"\} 1$/m);
  assert.match(text, /^cni_bench_probe_peer_up\{source_node="node-a",target_node="node-b"\} 1$/m);
  assert.match(text, /^process_resident_memory_bytes\{node="node-a"\} \d+/m);
  assert.doesNotMatch(text, /127\.0\.0\.1/, 'no IPs in labels');
  assertValidExposition(text, 'agent node-a');
  const c = await (await fetch(`${collector.httpUrl}/metrics`)).text();
  assert.match(c, /^cni_bench_monitor_pairs\{state="ok"\} 2$/m);
  assert.match(c, /^cni_bench_monitor_node_probers\{node="node-b",state="ok"\} 1$/m);
  assertValidExposition(c, 'collector');
});

test('gRPC GetMonitor answers what REST does', async () => {
  const client = new MonitorServiceClient(collector.grpcAddress, credentials.createInsecure());
  const viaGrpc = await new Promise<MonitorSnapshot>((resolve, reject) =>
    client.getMonitor({}, (err, r) => (err ? reject(err) : resolve(r))),
  );
  client.close();
  const viaRest = await monitor();
  assert.deepEqual(
    viaGrpc.nodes.map((n) => [n.nodeName, n.peers]),
    viaRest.nodes.map((n) => [n.nodeName, n.peers]),
  );
  assert.equal(viaGrpc.matrix.length, viaRest.matrix.length);
});

test('when a peer goes away, the plan drops it and its series are removed', async () => {
  await stop(agents.get('node-b')?.proc);
  await waitFor(
    'node-a without node-b series',
    async () => {
      const text = await agentMetrics('node-a');
      return !/target_node="node-b"/.test(text) && /^cni_bench_probe_peers\{node="node-a"\} 0$/m.test(text);
    },
    20_000,
    200,
  );
  const s = await monitor();
  assert.equal(s.nodes.find((n) => n.nodeName === 'node-b')?.state, 'disconnected');
});

test('probe series of a target leave with it; others stay', async () => {
  const m = new AgentMetrics('a');
  m.probeOk('tcp-rr', 'b', 0.0001);
  m.probeError('tcp-connect', 'b', 'timeout');
  m.setPeerUp('b', false);
  m.probeOk('tcp-rr', 'c', 0.0001);
  m.setPeers(['c']);
  const text = await m.registry.metrics();
  assert.doesNotMatch(text, /target_node="b"/);
  assert.match(text, /target_node="c"/);
});
