/**
 * The agent's sampler and the collector's sync decision against a REAL
 * cilium-agent (v1.20.2, kube-proxy replacement with socket LB) on one
 * throwaway node (test/support/harness/cilium-node.ts) with a real apiserver:
 *
 *  - the sampler finds the node's own cilium-agent, reads its bpffs through
 *    its mount namespace, decodes the LB maps into frontends with backends,
 *    and names the node's pinned maps with their memory; the agent's CPU and
 *    memory are counted for this node;
 *  - a new Service counts as programmed exactly when its frontend holds its
 *    backend in Cilium's maps (checkSync on real samples; never a sleep), and
 *    the frontends match what `cilium-dbg service list` says;
 *  - Cilium's translation evidence moves with connections made to the
 *    ClusterIP from inside the node's cgroup, and not with connections made
 *    straight to the backend (so the figure can fail).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CoreV1Api, DiscoveryV1Api } from '@kubernetes/client-node';
import { parseCiliumServiceList } from '../../agent/samplers/cilium-dbg.js';
import { DataplaneSampler, type SampleBody } from '../../agent/samplers/dataplane-sampler.js';
import { checkSync, serviceSyncTarget } from '../../collector/runs/sync.js';
import { run } from '../../core/process.js';
import type { DataplaneSample } from '../../gen/cnibench/v1/agent.js';
import { socketLbDelta } from '../../report/report.js';
import { kubeConfigFrom } from '../support/harness/apply.js';
import { type CiliumNode, ciliumMissing, startCiliumNode } from '../support/harness/cilium-node.js';
import { type ControlPlane, startControlPlane } from '../support/harness/control-plane.js';
import { repoRoot } from '../support/helpers/fixtures.js';
import { DIST, waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const skip = notRoot || ciliumMissing();
const NODE_IP = '198.18.0.10';
const BACKEND = `${NODE_IP}:8080`;
const NS = 'default';
/** Set to 1 to rewrite test/fixtures/cilium/ from this run (see its README lines). */
const UPDATE_FIXTURES = process.env.CNI_BENCH_UPDATE_FIXTURES === '1';
const FIXTURES = join(repoRoot, 'test', 'fixtures', 'cilium');

/** bpftool in the agent's mount namespace, as the sampler runs it; stdout whatever the exit code. */
async function bpftool(args: string[]): Promise<string> {
  return (
    await run('nsenter', [`--mount=/proc/${node!.pid}/ns/mnt`, '--', 'bpftool', ...args], {
      tool: 'bpftool',
      timeoutMs: 30_000,
      okExitCodes: [0, 255],
      maxBuffer: 256 * 1024 * 1024,
    })
  ).stdout;
}

/** Captures the real tools' output on this node into test/fixtures/cilium/ (only with CNI_BENCH_UPDATE_FIXTURES=1). */
async function capture(tag: string): Promise<void> {
  if (!UPDATE_FIXTURES) return;
  mkdirSync(FIXTURES, { recursive: true });
  const put = (name: string, text: string): void => writeFileSync(join(FIXTURES, name), text);
  const g = '/sys/fs/bpf/tc/globals';
  put(
    `bpftool-lb4-services-${tag}.json`,
    await bpftool(['map', 'dump', 'pinned', `${g}/cilium_lb4_services_v2`, '-j']),
  );
  put(
    `bpftool-lb4-backends-${tag}.json`,
    await bpftool(['map', 'dump', 'pinned', `${g}/cilium_lb4_backends_v3`, '-j']),
  );
  put(`bpftool-metrics-${tag}.json`, await bpftool(['map', 'dump', 'pinned', `${g}/cilium_metrics`, '-j']));
  put(`bpftool-reverse-sk-${tag}.json`, await bpftool(['map', 'dump', 'pinned', `${g}/cilium_lb4_reverse_sk`, '-j']));
  put(`bpftool-f-map-show-${tag}.json`, await bpftool(['-f', 'map', 'show', '-j']));
  put(`cilium-dbg-service-list-${tag}.json`, await node!.dbg(['service', 'list', '-o', 'json']));
  if (tag !== 'service') return;
  put('bpftool-dump-missing-pin.json', await bpftool(['map', 'dump', 'pinned', `${g}/cilium_lb4_services_v9`, '-j']));
  put('agent-cmdline.txt', readFileSync(`/proc/${node!.pid}/cmdline`, 'utf8'));
}

let cp: ControlPlane | undefined;
let node: CiliumNode | undefined;
let sampler: DataplaneSampler | undefined;
let server: ReturnType<typeof spawn> | undefined;

const full = (s: SampleBody): DataplaneSample => ({ ...s, runId: 'r', samplingJobId: 'j' });
const fresh = async (): Promise<DataplaneSample> => full(await sampler!.sample(undefined, { fresh: true }));

/** Runs the project's TCP_CRR client for `seconds` inside the node's namespace and cgroup; returns its transactions. */
async function crr(host: string, port: number, seconds: number): Promise<number> {
  // The shell puts itself into the node's cgroup, then becomes the client: socket LB applies there only.
  const script = 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"';
  const args = [
    '-c',
    script,
    'sh',
    node!.cgroup,
    'ip',
    'netns',
    'exec',
    node!.netns.name,
    process.execPath,
    join(DIST, 'agent/builtins/tcp-rr.js'),
    '--host',
    host,
    '--port',
    String(port),
    '--duration',
    String(seconds),
    '--crr',
    '--connections',
    '2',
  ];
  const child = spawn('sh', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, out);
  const result = JSON.parse(
    out
      .trim()
      .split('\n')
      .find((l) => l.startsWith('{"tool":"tcp-rr"')) ?? '{}',
  ) as { transactions?: number; errors?: number };
  assert.equal(result.errors, 0, out);
  return result.transactions ?? 0;
}

before(async () => {
  if (skip) return;
  cp = await startControlPlane({});
  node = await startCiliumNode(cp, { nodeName: 'cilium-obs-n1', nodeIp: NODE_IP, podCidr: '198.18.64.0/24' });
  sampler = new DataplaneSampler({ hostNetns: node.netnsPath });
  server = spawn(
    'ip',
    [
      'netns',
      'exec',
      node.netns.name,
      process.execPath,
      join(DIST, 'agent/builtins/tcp-echo.js'),
      '--host',
      NODE_IP,
      '--port',
      '8080',
    ],
    { stdio: 'ignore' },
  );
});

after(async () => {
  server?.kill('SIGTERM');
  await sampler?.close();
  await node?.stop();
  await cp?.stop();
});

test("the sampler reads the node's own Cilium: LB frontends with backends, pinned map memory, the agent's CPU and memory", {
  skip,
  timeout: 300_000,
}, async () => {
  const s = await fresh();
  const c = s.cilium;
  assert.ok(c, `no Cilium state; errors: ${s.errors.join('; ')}`);
  assert.equal(c.agentPid, node!.pid);
  assert.equal(c.bpffs, '/sys/fs/bpf');
  assert.deepEqual(
    s.errors.filter((e) => e.startsWith('cilium')),
    [],
  );
  // The kubernetes Service (198.19.0.1:443) is there, as cilium-dbg lists it.
  const kube = c.frontendList.find((f) => f.address === '198.19.0.1' && f.port === 443);
  assert.ok(kube, JSON.stringify(c.frontendList));
  // The same frontends and backends as the agent's own API says (cilium-dbg service list).
  const api = parseCiliumServiceList(await node!.dbg(['service', 'list', '-o', 'json']));
  const fromApi = api
    .map((x) => `${x.address}:${x.port}/${x.scope === 'internal' ? 'i' : 'e'} -> ${x.activeBackends.sort().join(',')}`)
    .sort();
  const fromMaps = c.frontendList
    .map((f) => `${f.address}:${f.port}/${f.internalScope ? 'i' : 'e'} -> ${[...f.backends].sort().join(',')}`)
    .sort();
  assert.deepEqual(fromMaps, fromApi);
  assert.ok(c.pinnedMaps > 10, `${c.pinnedMaps} pinned maps`);
  assert.ok(c.pinnedBytesMemlock > 1e6, `${c.pinnedBytesMemlock} bytes`);
  assert.ok(c.topMaps.length > 0 && c.topMaps.every((m) => m.name.startsWith('cilium_')), JSON.stringify(c.topMaps));
  assert.ok(c.socketLbXlatedClosed !== undefined, 'the socket-LB counter was read');
  await capture('initial');
  const agent = s.processes.find((p) => p.name === 'cilium-agent');
  assert.deepEqual(agent?.pids, [node!.pid], "only this node's agent is counted");
  assert.ok((agent?.rssBytes ?? 0) > 10e6);
});

test('a new Service is programmed when its frontend holds its backend in the LB maps; socket-LB counts the ClusterIP connections only', {
  skip,
  timeout: 300_000,
}, async () => {
  const before = await fresh();
  const kc = kubeConfigFrom(cp!.adminKubeconfig);
  const svc = await kc.makeApiClient(CoreV1Api).createNamespacedService({
    namespace: NS,
    body: {
      metadata: { name: 'obs-echo' },
      spec: { type: 'ClusterIP', ports: [{ name: 'p', port: 80, protocol: 'TCP', targetPort: 8080 }] },
    },
  });
  const ip = svc.spec?.clusterIP ?? '';
  const target = serviceSyncTarget(before, { ip, port: 80 }, [BACKEND]);
  // Without endpoints the frontend may appear, but it does not count as programmed.
  const noEndpoints = checkSync(await fresh(), target);
  assert.equal(noEndpoints.ok, false, 'a frontend without its backend is not programmed');
  const created = Date.now();
  await kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
    namespace: NS,
    body: {
      metadata: { name: 'obs-echo-1', labels: { 'kubernetes.io/service-name': 'obs-echo' } },
      addressType: 'IPv4',
      ports: [{ name: 'p', port: 8080, protocol: 'TCP' }],
      endpoints: [{ addresses: [NODE_IP], conditions: { ready: true } }],
    },
  });
  const ready = await waitFor(
    'the Service in the LB maps',
    async () => {
      const s = await fresh();
      return checkSync(s, target).ok ? s : undefined;
    },
    60_000,
    200,
  );
  const syncMs = Date.now() - created;
  const f = ready.cilium?.frontendList.find((x) => x.address === ip && x.port === 80);
  assert.deepEqual(f?.backends, [BACKEND]);
  assert.equal(ready.cilium?.programmedFrontends, (before.cilium?.programmedFrontends ?? 0) + 1);
  process.stderr.write(
    `cilium sync: ${ip}:80 -> ${BACKEND} programmed ${syncMs} ms after its EndpointSlice (sampled)\n`,
  );

  // Through the ClusterIP: every connection translated by the socket LB, counted once closed.
  const t0 = await fresh();
  const viaService = await crr(ip, 80, 2);
  const t1 = await fresh();
  const translated = socketLbDelta(t0, t1);
  assert.ok(viaService > 50, `${viaService} transactions`);
  assert.ok(
    translated !== null && translated >= viaService && translated <= viaService + 10,
    `socket-LB +${translated} for ${viaService} connections through the Service`,
  );
  // Straight to the backend: nothing to translate.
  const direct = await crr(NODE_IP, 8080, 1);
  const t2 = await fresh();
  assert.ok(direct > 50);
  assert.equal(socketLbDelta(t1, t2), 0, 'connections to the backend itself are not counted');
  await capture('service');
  process.stderr.write(
    `cilium socket-LB: +${translated} for ${viaService} connections via ${ip}:80, +${socketLbDelta(t1, t2)} for ${direct} direct\n`,
  );
});

test("stopping the node leaves nothing of it: no agent, no namespace, no cgroup (bpffs and /run went with the agent's mount namespace)", {
  skip,
  timeout: 120_000,
}, async () => {
  const n = node!;
  server?.kill('SIGTERM');
  await n.stop();
  node = undefined;
  assert.equal(existsSync(`/proc/${n.pid}`), false, 'cilium-agent still running');
  assert.equal(existsSync(n.netnsPath), false, `${n.netnsPath} left`);
  assert.equal(existsSync(n.cgroup), false, `${n.cgroup} left`);
});
