/**
 * Monitoring against the real apiserver (the harness), with the real collector
 * process acting as the Helm chart's collector ServiceAccount (its own RBAC,
 * its own node watch): a 3-node lab whose nodes the lab does not program
 * (proxy mode 'external'), the real kube-proxy in iptables mode in every lab
 * node namespace, and a Node object per lab node whose readiness the test
 * writes (kwok would rewrite the Ready condition; no kubelet or node
 * controller runs, so the status stays as written).
 *
 * Shown: the collector creates the probe Service (a labelled Service and
 * EndpointSlice with every agent's responder) in the apiserver, kube-proxy
 * programs it and every agent's http-service probe crosses it; a node cordoned
 * (spec.unschedulable) or NotReady leaves every agent's plan and the
 * EndpointSlice, and comes back when uncordoned or Ready again; SIGTERM to the
 * collector removes the probe Service and its EndpointSlice (nothing left).
 * Probe traffic stays in the lab's namespaces (198.18.0.0/15); everything is
 * removed afterwards, also on failure.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { CoreV1Api, DiscoveryV1Api, type V1Node } from '@kubernetes/client-node';
import { ALL_MANAGED } from '../../collector/kubernetes/objects.js';
import { createLogger } from '../../core/log.js';
import type { MonitorSnapshot } from '../../gen/cnibench/v1/monitor.js';
import { Lab } from '../../lab/lab.js';
import { COLLECTOR_NAMESPACE, collectorCluster, startKubeProxies } from '../support/harness/collector-cluster.js';
import { startKubernetesCollector } from '../support/harness/collector-process.js';
import type { RealKubeProxy } from '../support/harness/kube-proxy.js';
import { NO_LEFTOVERS, ownLabLeftovers, rootLinks, rootRules } from '../support/helpers/host-state.js';
import { getJson, type Proc, stop, waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const NS = COLLECTOR_NAMESPACE;
const PROBE_SERVICE = 'cni-bench-monitor-probe';
const INTERVAL_S = 1;
const log = createLogger({ test: 'k8s-lab-monitor' }, 'warn');

const k8s = collectorCluster(notRoot);

/** Sets the node's Ready condition (kube-proxy's ensureNode keeps conditions when it adds the addresses). */
async function setReady(name: string, ready: boolean): Promise<void> {
  const core = k8s.admin.makeApiClient(CoreV1Api);
  const node = await core.readNode({ name });
  const now = new Date();
  const conditions = [
    {
      type: 'Ready',
      status: ready ? 'True' : 'False',
      reason: ready ? 'KubeletReady' : 'KubeletNotReady',
      lastHeartbeatTime: now,
      lastTransitionTime: now,
    },
  ];
  await core.replaceNodeStatus({ name, body: { ...node, status: { ...node.status, conditions } } as V1Node });
}

async function setCordoned(name: string, cordoned: boolean): Promise<void> {
  const core = k8s.admin.makeApiClient(CoreV1Api);
  const node = await core.readNode({ name });
  await core.replaceNode({ name, body: { ...node, spec: { ...node.spec, unschedulable: cordoned } } });
}

/** The probe Service's objects in the apiserver: the Service's labels and ClusterIP, the slice's addresses. */
async function probeObjects(): Promise<{
  services: number;
  slices: number;
  ip?: string;
  labels?: Record<string, string>;
  addresses: string[];
}> {
  const services = (
    await k8s.admin.makeApiClient(CoreV1Api).listNamespacedService({ namespace: NS, labelSelector: ALL_MANAGED })
  ).items;
  const slices = (
    await k8s.admin
      .makeApiClient(DiscoveryV1Api)
      .listNamespacedEndpointSlice({ namespace: NS, labelSelector: ALL_MANAGED })
  ).items;
  const svc = services.find((s) => s.metadata?.name === PROBE_SERVICE);
  const slice = slices.find((s) => s.metadata?.name === PROBE_SERVICE);
  return {
    services: services.length,
    slices: slices.length,
    ...(svc?.spec?.clusterIP ? { ip: svc.spec.clusterIP } : {}),
    ...(svc?.metadata?.labels ? { labels: svc.metadata.labels } : {}),
    addresses: (slice?.endpoints ?? []).flatMap((e) => e.addresses).sort(),
  };
}

/** Which nodes any monitoring agent's plan targets now. */
function targets(s: MonitorSnapshot): string[] {
  return [...new Set(s.nodes.flatMap((n) => n.peers))].sort();
}

/** The collector process as the chart's ServiceAccount, its agents' gRPC on the lab's control socket. */
function startCollectorProcess(lab: Lab): Promise<{ proc: Proc; url: string }> {
  return startKubernetesCollector(
    { kubeconfig: k8s.kubeconfig, namespace: NS, sweepNamespace: k8s.sweepNamespace },
    `unix:${lab.controlSocket}`,
    { CNI_BENCH_HEARTBEAT_INTERVAL_MS: '1000' },
  );
}

/** Waits until the plans target exactly `want` and the probe Service's slice holds exactly their pod IPs. */
async function planned(
  lab: Lab,
  monitor: () => Promise<MonitorSnapshot>,
  want: string[],
  what: string,
): Promise<number> {
  const began = Date.now();
  const ips = lab.plan.nodes
    .filter((n) => want.includes(n.name))
    .map((n) => n.pods[0]?.ip ?? '')
    .sort();
  await waitFor(
    what,
    async () => {
      const s = await monitor();
      return (
        JSON.stringify(targets(s)) === JSON.stringify(want) &&
        JSON.stringify((await probeObjects()).addresses) === JSON.stringify(ips)
      );
    },
    20_000,
    100,
  );
  return Date.now() - began;
}

async function monitorWithRealKubeProxy(t: TestContext): Promise<void> {
  const links = rootLinks();
  const rules = rootRules();
  const lab = await Lab.create({ nodes: 3, log, monitor: { intervalS: INTERVAL_S }, proxy: { mode: 'external' } });
  const proxies: RealKubeProxy[] = [];
  let collector: { proc: Proc; url: string } | undefined;
  const names = lab.plan.nodes.map((n) => n.name).sort();
  try {
    const core = k8s.admin.makeApiClient(CoreV1Api);
    for (const node of lab.plan.nodes) {
      await core.createNode({
        body: {
          metadata: { name: node.name, labels: { 'kubernetes.io/hostname': node.name, 'kubernetes.io/os': 'linux' } },
        },
      });
      await setReady(node.name, true);
    }
    await startKubeProxies(k8s.cp, lab.plan.nodes, 'iptables', proxies);

    collector = await startCollectorProcess(lab);
    lab.startAgents(`unix:${lab.controlSocket}`);
    const url = collector.url;
    const monitor = async () => (await getJson(`${url}/v1/monitor`)).body as MonitorSnapshot;

    // The probe Service in the apiserver, programmed by kube-proxy, crossed by every agent's Service probe.
    const s = await waitFor(
      'every node probing its 2 peers and an http-service probe answered on every node',
      async () => {
        const x = await monitor();
        const service = x.matrix.filter((c) => c.type === 'http-service');
        return x.nodes.length === 3 &&
          x.nodes.every((n) => n.state === 'probing' && n.peers.length === 2) &&
          service.length === 3 &&
          service.every((c) => c.state === 'ok')
          ? x
          : undefined;
      },
      60_000,
      200,
    ).catch(async (err: Error) => {
      throw new Error(
        `${err.message}\n${JSON.stringify(await monitor().catch(() => undefined))}\n${collector?.proc.output().slice(-3000)}`,
      );
    });
    const objects = await probeObjects();
    assert.deepEqual(
      [objects.services, objects.slices],
      [1, 1],
      'one Service and one EndpointSlice, the probe Service',
    );
    assert.equal(objects.labels?.['app.kubernetes.io/managed-by'], 'cni-bench', JSON.stringify(objects.labels));
    assert.ok(objects.ip?.startsWith('198.19.'), `a ClusterIP from the harness Service range: ${objects.ip}`);
    assert.deepEqual(objects.addresses, lab.plan.nodes.map((n) => n.pods[0]?.ip ?? '').sort());
    const answered = [
      ...new Set(s.matrix.filter((c) => c.type === 'http-service').flatMap((c) => c.answeredBy)),
    ].sort();
    t.diagnostic(
      `probe Service ${objects.ip} -> ${objects.addresses.join(', ')}; http-service answered by ${answered.join(', ')}`,
    );
    assert.deepEqual(targets(s), names);

    // Cordoned, then NotReady: out of every plan and the Service; back when it is schedulable and Ready again.
    const [cordoned, notReady] = [lab.plan.nodes[1]?.name ?? '', lab.plan.nodes[2]?.name ?? ''];
    await setCordoned(cordoned, true);
    const outCordon = await planned(
      lab,
      monitor,
      names.filter((n) => n !== cordoned),
      `${cordoned} cordoned: out of every plan and the probe Service`,
    );
    const kept = (await monitor()).nodes.find((n) => n.nodeName === cordoned);
    assert.equal(kept?.peers.length, 2, 'a cordoned node still probes its peers');
    await setCordoned(cordoned, false);
    const backCordon = await planned(lab, monitor, names, `${cordoned} uncordoned: back`);
    await setReady(notReady, false);
    const outReady = await planned(
      lab,
      monitor,
      names.filter((n) => n !== notReady),
      `${notReady} NotReady: out of every plan and the probe Service`,
    );
    await setReady(notReady, true);
    const backReady = await planned(lab, monitor, names, `${notReady} Ready: back`);
    t.diagnostic(
      `plans and probe Service followed the node watch: cordon ${outCordon} ms, uncordon ${backCordon} ms, NotReady ${outReady} ms, Ready ${backReady} ms`,
    );

    // SIGTERM: the collector removes the probe Service before it exits.
    collector.proc.child.kill('SIGTERM');
    assert.equal(await collector.proc.exited, 0, collector.proc.output().slice(-3000));
    const left = await probeObjects();
    assert.deepEqual([left.services, left.slices], [0, 0], 'nothing of the collector left in the apiserver');
  } finally {
    await stop(collector?.proc);
    for (const kp of proxies)
      await kp.stop().catch((err: Error) => log.error('kube-proxy stop failed', { error: err.message }));
    await lab.destroy();
    const core = k8s.admin.makeApiClient(CoreV1Api);
    for (const n of names) await core.deleteNode({ name: n }).catch(() => undefined);
  }
  assert.deepEqual(ownLabLeftovers(lab.plan.id), NO_LEFTOVERS);
  assert.equal(rootLinks(), links);
  assert.equal(rootRules(), rules);
}

test(
  'monitoring in a cluster: the probe Service in the apiserver through the real kube-proxy, cordoned and NotReady nodes out of the plans and back, nothing left after SIGTERM',
  { skip: notRoot, timeout: 300_000 },
  (t) => monitorWithRealKubeProxy(t),
);
