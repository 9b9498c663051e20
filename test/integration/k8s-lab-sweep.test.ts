/**
 * The cluster path end to end with real parts: a Service scale sweep run by
 * the real collector (in process, REST) with KubernetesServiceFrontend against
 * the harness apiserver, acting as the Helm chart's collector ServiceAccount;
 * a lab whose nodes the lab does not program (proxy mode 'external'); and the
 * real kube-proxy v1.37 in every lab node namespace, in iptables mode (the
 * backend it picks) and in nftables mode, each in a fresh lab. kube-proxy
 * programs what the collector created (selector-less Services and
 * EndpointSlices); each step counts as done only when every agent's sample of
 * its node shows its own baseline plus the step (the orchestrator's check);
 * the measurements go through a ClusterIP that only kube-proxy's rules make
 * reachable, to the server pod. Afterwards the collector has removed its
 * objects and kube-proxy its rules.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, type TestContext, test } from 'node:test';
import { CoreV1Api, DiscoveryV1Api } from '@kubernetes/client-node';
import type { Collector } from '../../collector/index.js';
import { ALL_MANAGED } from '../../collector/kubernetes/objects.js';
import { ErrorCodes, isCniBenchError } from '../../core/errors.js';
import { createLogger } from '../../core/log.js';
import { Lab } from '../../lab/lab.js';
import {
  COLLECTOR_NAMESPACE,
  collectorCluster,
  startKubeProxies,
  startLabCollector,
} from '../support/harness/collector-cluster.js';
import type { KubeProxyMode, RealKubeProxy } from '../support/harness/kube-proxy.js';
import { serviceCounts } from '../support/harness/kube-proxy-rules.js';
import { NO_LEFTOVERS, ownLabLeftovers, rootLinks, rootRules } from '../support/helpers/host-state.js';
import { getJson, waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const NS = COLLECTOR_NAMESPACE;
const STEPS = [0, 300];
const SCENARIO = {
  durationSeconds: 1,
  warmupSeconds: 0.3,
  rounds: 2,
  roundSleepSeconds: 0.5,
  // Boundary samples only, as the lab sweep: the sync check takes its own.
  sampleIntervalMs: 0,
  serviceScale: { steps: STEPS, endpointsPerService: 2, syncTimeoutSeconds: 120 },
};
const log = createLogger({ test: 'k8s-lab-sweep' }, 'warn');
const tmp = mkdtempSync(join(tmpdir(), 'cnib-k8s-sweep-'));

const k8s = collectorCluster(notRoot);
after(() => rmSync(tmp, { recursive: true, force: true }));

async function managedCount(namespace: string): Promise<{ services: number; slices: number }> {
  const services = await k8s.admin
    .makeApiClient(CoreV1Api)
    .listNamespacedService({ namespace, labelSelector: ALL_MANAGED });
  const slices = await k8s.admin
    .makeApiClient(DiscoveryV1Api)
    .listNamespacedEndpointSlice({ namespace, labelSelector: ALL_MANAGED });
  return { services: services.items.length, slices: slices.items.length };
}

/** What a node shows of the service proxy in `mode`: KUBE-SERVICES rules or service-ips elements. */
async function proxyCount(netns: string, mode: KubeProxyMode): Promise<number | undefined> {
  const c = await serviceCounts(netns);
  return mode === 'iptables' ? c.kubeServicesRules : c.serviceIps;
}

interface ScaleDetail {
  scale: { services: number };
  programmingMs: number;
  syncMs: number;
  syncPolls: number;
  expect: Record<string, { kubeServicesRules?: number; nftServiceIps?: number }>;
  nodes: Record<string, { kubeServicesRules: number; nftServiceIps: number | null }>;
}

async function sweepWithRealKubeProxy(t: TestContext, mode: KubeProxyMode): Promise<void> {
  const links = rootLinks();
  const rules = rootRules();
  const lab = await Lab.create({ nodes: 2, log, proxy: { mode: 'external' } });
  const proxies: RealKubeProxy[] = [];
  let collector: Collector | undefined;
  try {
    // The lab wrote nothing, and refuses to stand in for the cluster's Services.
    for (const node of lab.plan.nodes)
      assert.deepEqual(
        await serviceCounts(node.ns),
        { kubeServicesRules: 0, serviceIps: undefined, backend: undefined },
        `${node.ns} is empty`,
      );
    await assert.rejects(
      lab.services.expose('x', 80, []),
      (err) => isCniBenchError(err, ErrorCodes.LAB) && /external kube-proxy programs the nodes/.test(err.message),
    );

    // kube-proxy's first sync (after its informers synced): the nodeports rule in KUBE-SERVICES, or the service-ips map.
    const synced = await startKubeProxies(k8s.cp, lab.plan.nodes, mode, proxies, async (ns) => {
      const c = await proxyCount(ns, mode);
      return c !== undefined && (mode === 'nftables' || c > 0) ? c : undefined;
    });
    const baseline = new Map(lab.plan.nodes.map((node, i) => [node.ns, synced[i] as number]));
    const backend = (await serviceCounts(lab.plan.nodes[0]?.ns ?? '')).backend;

    const frontend = k8s.frontend(log);
    await frontend.init();
    collector = await startLabCollector(lab, frontend, join(tmp, `${mode}.db`), log);
    const c = collector;

    const began = Date.now();
    const created = await getJson(`${c.httpUrl}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: `k8s lab sweep ${mode}`, ...SCENARIO }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await c.orchestrator.wait(created.body.id);
    const run = (await getJson(`${c.httpUrl}/v1/runs/${created.body.id}`)).body;
    const report = (await getJson(`${c.httpUrl}/v1/runs/${created.body.id}/report?format=json`)).body;
    assert.equal(
      run.state,
      'succeeded',
      `${run.reason}\n${JSON.stringify(
        run.phases.filter((p: { state: string }) => p.state !== 'succeeded'),
        null,
        1,
      )}`,
    );

    // Every step: each agent's node at least its own baseline + the step, as the orchestrator checked.
    const scale = (run.phases as { detail: ScaleDetail }[]).map((p) => p.detail).filter((d) => d.scale);
    assert.deepEqual(
      scale.map((d) => d.scale.services),
      STEPS,
    );
    const key = mode === 'iptables' ? 'kubeServicesRules' : 'nftServiceIps';
    const agents = Object.keys(scale[0]?.expect ?? {});
    assert.equal(agents.length, lab.agentCount, 'every agent (the peer too) was checked');
    for (const d of scale) {
      for (const id of agents) {
        const target = d.expect[id]?.[key];
        const base = scale[0]?.expect[id]?.[key];
        assert.ok(
          typeof target === 'number' && typeof base === 'number',
          `${mode} step ${d.scale.services}: ${id} has a ${key} target (${JSON.stringify(d.expect[id])})`,
        );
        assert.equal(target - base, d.scale.services, `${id}: target is its baseline + ${d.scale.services}`);
        assert.ok(
          (d.nodes[id]?.[key] ?? -1) >= target,
          `${mode} step ${d.scale.services}: ${id} showed ${d.nodes[id]?.[key]} >= ${target}`,
        );
      }
    }
    // The baseline the orchestrator sampled is what kube-proxy wrote before the run (nothing else programs these nodes).
    for (const node of lab.plan.nodes) {
      const own = agents.filter((id) => id === node.name || id.startsWith(`${node.name}-`));
      for (const id of own) assert.equal(scale[0]?.expect[id]?.[key], baseline.get(node.ns), `${id} baseline`);
    }

    // Through the real ClusterIP: every measurement at every step, two rounds, a rate above zero; in
    // iptables mode the real kube-proxy's KUBE-SEP counters on the client's node saw the connections.
    const measured = (
      report.rows as {
        path: string;
        measurement: string;
        value: number | null;
        rounds: number;
        dnatConnections: number | null;
        step?: number;
        status: string;
        details: Record<string, number>;
      }[]
    ).filter((r) => r.path === 'service');
    assert.equal(measured.length, STEPS.length * 3);
    for (const r of measured) {
      assert.equal(r.status, 'succeeded', `${r.measurement}`);
      assert.equal(r.rounds, 2, `${r.measurement}: two rounds`);
      assert.ok((r.value ?? 0) > 0, `${r.measurement}: ${r.value}`);
      assert.equal(r.details.socketErrors ?? 0, 0, `${r.measurement}: no socket errors in the measured rounds`);
      if (mode === 'iptables')
        assert.ok(
          (r.dnatConnections ?? 0) > 0,
          `${r.measurement} did not cross kube-proxy's DNAT rules (${r.dnatConnections})`,
        );
      else assert.equal(r.dnatConnections, null, 'nftables mode keeps no per-rule counters');
    }
    // Each new Service was waited for on the client's node before anything was sent to it (http-echo's, tcp-rr's).
    const targets = (run.phases as { detail: { target?: { host: string; via: string; syncMs?: number } } }[])
      .map((p) => p.detail.target)
      .filter((x) => x !== undefined);
    assert.equal(targets.length, measured.length);
    for (const x of targets) {
      assert.ok(x.host.startsWith('198.19.'), `a ClusterIP the apiserver allocated from 198.19.0.0/16: ${x.host}`);
      assert.equal(x.via, 'Service Kubernetes Services and EndpointSlices');
    }
    const serviceSync = targets.map((x) => x.syncMs).filter((ms) => ms !== undefined);
    assert.equal(serviceSync.length, 2, 'two Services (http-echo, tcp-rr), each waited for once');

    const clientDataplane = (report.cluster as { client: { dataplane: { iptablesBackend: string } } }).client.dataplane;
    if (mode === 'iptables')
      assert.equal(clientDataplane.iptablesBackend, backend, 'the agent reads the backend kube-proxy writes');
    assert.equal(report.sweep.series.length, 3);
    for (const s of report.sweep.series as { label: string; values: (number | null)[] }[])
      assert.ok(
        s.values.every((v) => v !== null && v > 0),
        `${s.label}: ${s.values}`,
      );

    // The collector removed its objects; kube-proxy then removed the rules (it syncs asynchronously: poll).
    assert.deepEqual(await managedCount(k8s.sweepNamespace), { services: 0, slices: 0 });
    assert.deepEqual(await managedCount(NS), { services: 0, slices: 0 });
    for (const node of lab.plan.nodes) {
      await waitFor(
        `kube-proxy to remove the rules in ${node.ns}`,
        async () => (await proxyCount(node.ns, mode)) === baseline.get(node.ns),
        60_000,
        250,
      );
    }

    const fmt = (n: number | null) => (n === null ? '-' : Math.round(n).toLocaleString('en-US'));
    const steps = (
      report.sweep.steps as { services: number; programmingMs: number; syncMs: number; pollMs: number }[]
    ).map(
      (s, i) =>
        `${s.services}: programming ${s.programmingMs} ms, sync ${s.syncMs} ms (${scale[i]?.syncPolls} polls, last ${s.pollMs} ms)`,
    );
    const series = (report.sweep.series as { label: string; unit: string; values: (number | null)[] }[]).map(
      (s) => `${s.label} ${s.values.map(fmt).join(' -> ')} ${s.unit}`,
    );
    t.diagnostic(
      `${mode}${backend ? ` (${backend})` : ''}: run ${((Date.now() - began) / 1000).toFixed(1)} s; baseline ${[...baseline.values()].join('/')}; new Services in the client's dataplane after ${serviceSync.join(', ')} ms; steps ${steps.join('; ')}; ${series.join('; ')}`,
    );
  } finally {
    await collector?.close().catch((err: Error) => log.error('collector close failed', { error: err.message }));
    for (const kp of proxies)
      await kp.stop().catch((err: Error) => log.error('kube-proxy stop failed', { error: err.message }));
    await lab.destroy();
  }
  assert.deepEqual(ownLabLeftovers(lab.plan.id, { anyLoadGenerator: true }), NO_LEFTOVERS);
  assert.equal(rootLinks(), links);
  assert.equal(rootRules(), rules);
}

test(
  "the real kube-proxy in iptables mode programs the collector's sweep; the lab measures through it",
  { skip: notRoot, timeout: 600_000 },
  (t) => sweepWithRealKubeProxy(t, 'iptables'),
);

test(
  "the real kube-proxy in nftables mode programs the collector's sweep; the lab measures through it",
  { skip: notRoot, timeout: 600_000 },
  (t) => sweepWithRealKubeProxy(t, 'nftables'),
);
