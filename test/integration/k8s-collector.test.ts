/**
 * The collector's cluster path against a real kube-apiserver (the harness),
 * acting as the Helm chart's collector ServiceAccount with a token the
 * apiserver issued, so every call passes the chart's real RBAC: a scale sweep's
 * dummy Services and EndpointSlices are created, counted, resized and removed
 * by label; what a crashed collector left is removed at start-up; the Cilium
 * LB-map preflight refuses with the exact fix, and its change and rollout are
 * asked of the real authorizer (refused without the grant, and undone);
 * and the real collector process cleans up after a failed run and on SIGTERM.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  CoreV1Api,
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesObject,
  RbacAuthorizationV1Api,
} from '@kubernetes/client-node';
import { KubernetesServiceFrontend } from '../../collector/kubernetes/frontend.js';
import { ClusterInventory } from '../../collector/kubernetes/inventory.js';
import { ALL_MANAGED, dummyPair } from '../../collector/kubernetes/objects.js';
import { createLogger } from '../../core/log.js';
import { DataplaneSample } from '../../gen/cnibench/v1/agent.js';
import { installCollectorIdentity, kubeConfigFrom, renderChart } from '../support/harness/apply.js';
import { startCollectorProcess as startCollectorProcessAs } from '../support/harness/collector-process.js';
import { type ControlPlane, HARNESS_SERVICE_CIDR, startControlPlane } from '../support/harness/control-plane.js';
import { getJson, type Proc, stop, waitFor } from '../support/helpers/procs.js';

const NS = 'cni-bench';
const RELEASE = 'cni-bench-agent';
const log = createLogger({ test: 'k8s-collector' }, 'warn');
let cp: ControlPlane;
let admin: KubeConfig;
let saKubeconfig: string;
let sweepNs: string;

before(async () => {
  cp = await startControlPlane({});
  admin = kubeConfigFrom(cp.adminKubeconfig);
  ({ kubeconfig: saKubeconfig, sweepNamespace: sweepNs } = await installCollectorIdentity(cp, RELEASE, NS));
});

after(async () => {
  await cp?.stop();
});

function frontend(allowCiliumConfigChange = false): KubernetesServiceFrontend {
  return new KubernetesServiceFrontend(kubeConfigFrom(saKubeconfig), {
    namespace: NS,
    sweepNamespace: sweepNs,
    log,
    allowCiliumConfigChange,
  });
}

async function counts(namespace: string, selector = ALL_MANAGED): Promise<{ services: number; slices: number }> {
  const services = await admin.makeApiClient(CoreV1Api).listNamespacedService({ namespace, labelSelector: selector });
  const slices = await admin
    .makeApiClient(DiscoveryV1Api)
    .listNamespacedEndpointSlice({ namespace, labelSelector: selector });
  return { services: services.items.length, slices: slices.items.length };
}

test('as the chart ServiceAccount: a sweep step is programmed, resized, and removed by run label', async () => {
  const f = frontend();
  await f.init();
  assert.match(f.cluster.kubernetesVersion ?? '', /^v1\.\d+/);
  const up = await f.setDummyServices(120, 4, 'run-a');
  process.stdout.write(
    `# created 120 Services + 120 EndpointSlices in ${up.programmingMs} ms (${((240 / up.programmingMs) * 1000).toFixed(0)} objects/s, ${f.pacer.retries} retries)\n`,
  );
  assert.equal(up.added, 120);
  assert.deepEqual(await counts(sweepNs, `${ALL_MANAGED},cni-bench.io/run-id=run-a`), { services: 120, slices: 120 });
  const slice = await admin
    .makeApiClient(DiscoveryV1Api)
    .readNamespacedEndpointSlice({ name: 'cni-bench-dummy-7', namespace: sweepNs });
  assert.equal(slice.endpoints?.length, 4);
  const svc = await admin
    .makeApiClient(CoreV1Api)
    .readNamespacedService({ name: 'cni-bench-dummy-7', namespace: sweepNs });
  assert.equal(svc.spec?.selector, undefined, 'dummy Services have no selector');
  assert.ok(
    svc.spec?.clusterIP?.startsWith('198.19.'),
    `ClusterIP ${svc.spec?.clusterIP} from ${HARNESS_SERVICE_CIDR}`,
  );

  await f.setDummyServices(30, 4, 'run-a');
  assert.deepEqual(await counts(sweepNs), { services: 30, slices: 30 });

  const addr = await f.expose('wrk', 80, [{ ip: '198.18.16.10', port: 8080 }]);
  assert.ok(addr.ip.startsWith('198.19.'));
  assert.deepEqual(await counts(NS), { services: 1, slices: 1 });

  assert.equal(await f.removeRun('run-a'), 62);
  assert.deepEqual(await counts(sweepNs), { services: 0, slices: 0 });
  assert.deepEqual(await counts(NS), { services: 0, slices: 0 });
});

test('start-up removes what a crashed collector left, and only that', async () => {
  const core = admin.makeApiClient(CoreV1Api);
  const discovery = admin.makeApiClient(DiscoveryV1Api);
  for (let i = 0; i < 5; i++) {
    const p = dummyPair(sweepNs, i, 2, 'crashed-run');
    await core.createNamespacedService({ namespace: sweepNs, body: p.service });
    await discovery.createNamespacedEndpointSlice({ namespace: sweepNs, body: p.slice });
  }
  await core.createNamespacedService({
    namespace: NS,
    body: { metadata: { name: 'not-ours' }, spec: { ports: [{ port: 1 }] } },
  });
  const { leftovers } = await frontend().init();
  assert.equal(leftovers, 10);
  assert.deepEqual(await counts(sweepNs), { services: 0, slices: 0 });
  await core.readNamespacedService({ name: 'not-ours', namespace: NS });
  await core.deleteNamespacedService({ name: 'not-ours', namespace: NS });
});

test('Cilium preflight: refuses with the exact fix; the change and the rollout are asked of the authorizer, refused without the grant, and undone', async () => {
  const core = admin.makeApiClient(CoreV1Api);
  await core.createNamespacedConfigMap({
    namespace: 'kube-system',
    body: { metadata: { name: 'cilium-config' }, data: { 'bpf-lb-map-max': '1000' } },
  });
  // What two agents would sample on Cilium nodes whose loaded map holds 1000 (no Cilium runs here: the subject is the apiserver).
  const nodes = {
    samples: async () =>
      new Map(
        ['node-a', 'node-b'].map((n) => [
          n,
          DataplaneSample.fromPartial({
            cilium: { serviceEntries: 2, lbServicesMaxEntries: 1000, lbBackendsMaxEntries: 1000 },
          }),
        ]),
      ),
  };
  const value = async () =>
    (await core.readNamespacedConfigMap({ name: 'cilium-config', namespace: 'kube-system' })).data?.['bpf-lb-map-max'];
  try {
    // 300 x (4 + 2) + 2 = 1802 entries > 1000.
    await assert.rejects(
      frontend().prepare(300, 4, 'run-c', nodes),
      (err: Error) =>
        /need 1802 Cilium LB service map entries .* the loaded map holds 1000 \(loaded maps on node-a, node-b\)/.test(
          err.message,
        ) && /"bpf-lb-map-max":"65536"/.test(err.message),
    );
    await frontend().prepare(100, 4, 'run-c', nodes); // 602 fits
    // No node sampled: a raise could not be verified, so nothing is changed even when allowed.
    await assert.rejects(frontend(true).prepare(300, 4, 'run-c'), /no agent sampled Cilium's LB maps/);

    // Allowed by config but the chart's default RBAC (rbac.ciliumConfig.write=false) says no: the apiserver refuses.
    await assert.rejects(
      frontend(true).prepare(300, 4, 'run-c', nodes),
      /patch configmap kube-system\/cilium-config: HTTP 403/,
    );

    // With rbac.ciliumConfig.write=true the chart grants the ConfigMap write and the rollout restart of
    // daemonset/cilium by name. The Role without its daemonset rule first: the value is written, the rollout
    // refused by the real authorizer, and the value put back.
    const writable = renderChart(RELEASE, NS, ['rbac.ciliumConfig.write=true']).find(
      (o) => o.kind === 'Role' && o.metadata?.namespace === 'kube-system',
    ) as KubernetesObject & { rules: unknown[] };
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    const withoutRollout = {
      ...writable,
      rules: (writable.rules as { resources?: string[] }[]).filter((r) => !r.resources?.includes('daemonsets')),
    };
    assert.equal(withoutRollout.rules.length, writable.rules.length - 1, 'the chart grants the rollout');
    await rbac.replaceNamespacedRole({
      name: writable.metadata?.name ?? '',
      namespace: 'kube-system',
      body: withoutRollout as never,
    });
    const f = frontend(true);
    await waitFor(
      'the write permission to apply, then the rollout refused',
      async () =>
        f.prepare(300, 4, 'run-c', nodes).then(
          () => {
            throw new Error('the rollout restart went through without a grant');
          },
          (err: Error) => /rollout restart daemonset kube-system\/cilium: HTTP 403/.test(err.message) || undefined,
        ),
      10_000,
      250,
    );
    assert.equal(await value(), '1000', 'the raise was undone');
    await f.finish();
    assert.equal(await value(), '1000');

    // The chart's whole Role: the rollout is now authorized, and what stops it is that this harness runs no
    // cilium DaemonSet (404), never the authorizer; the raise is undone again.
    await rbac.replaceNamespacedRole({
      name: writable.metadata?.name ?? '',
      namespace: 'kube-system',
      body: writable as never,
    });
    const g = frontend(true);
    await waitFor(
      'the rollout to be authorized',
      async () =>
        g.prepare(300, 4, 'run-c', nodes).then(
          () => {
            throw new Error('a rollout of a DaemonSet that does not exist went through');
          },
          (err: Error) => /rollout restart daemonset kube-system\/cilium: HTTP 404/.test(err.message) || undefined,
        ),
      10_000,
      250,
    );
    assert.equal(await value(), '1000', 'the raise was undone');
    await g.finish();
  } finally {
    await core.deleteNamespacedConfigMap({ name: 'cilium-config', namespace: 'kube-system' });
  }
});

test('the inventory lists nodes and watches agent pods: a node counts as covered once its agent pod runs', async () => {
  const core = admin.makeApiClient(CoreV1Api);
  const ready = (name: string, isReady: boolean) => ({
    metadata: { name, labels: { 'node.kubernetes.io/instance-type': 'lab-2cpu' } },
    status: {
      conditions: [{ type: 'Ready', status: isReady ? 'True' : 'False' }],
      nodeInfo: { kernelVersion: '6.1.0-test' },
    },
  });
  for (const [name, isReady] of [
    ['inv-a', true],
    ['inv-b', true],
    ['inv-c', false],
  ] as const) {
    const node = await core.createNode({ body: { metadata: ready(name, isReady).metadata } });
    await core.replaceNodeStatus({ name, body: { ...node, status: ready(name, isReady).status } as never });
  }
  const f = frontend();
  const inventory = new ClusterInventory(
    kubeConfigFrom(saKubeconfig),
    f.pacer,
    NS,
    'app.kubernetes.io/name=cni-bench-agent',
    log,
  );
  await inventory.start();
  try {
    assert.deepEqual(
      inventory.coverage().missing,
      ['inv-a', 'inv-b'],
      'not-ready inv-c is not expected to have an agent',
    );
    assert.deepEqual(inventory.describe(), { nodeType: 'lab-2cpu' });
    const pod = await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'agent-inv-a', labels: { 'app.kubernetes.io/name': 'cni-bench-agent' } },
        spec: {
          nodeName: 'inv-a',
          serviceAccountName: 'cni-bench-agent',
          automountServiceAccountToken: false,
          containers: [{ name: 'agent', image: 'cni-bench:0.1.0' }],
        },
      },
    });
    await core.replaceNamespacedPodStatus({
      name: 'agent-inv-a',
      namespace: NS,
      body: { ...pod, status: { phase: 'Running' } } as never,
    });
    await waitFor(
      'the watch to see the running agent pod',
      () => (inventory.coverage().missing.join(',') === 'inv-b' ? true : undefined),
      10_000,
      100,
    );
    assert.equal(inventory.coverage().agentsRunning, 1);
    await core.deleteNamespacedPod({ name: 'agent-inv-a', namespace: NS, gracePeriodSeconds: 0 });

    // The node watch: a cordon reaches nodeStatus() and the listeners (the monitor replans on it).
    let changes = 0;
    inventory.onNodeStatusChange(() => changes++);
    const b = await core.readNode({ name: 'inv-b' });
    await core.replaceNode({ name: 'inv-b', body: { ...b, spec: { ...b.spec, unschedulable: true } } });
    await waitFor(
      'the node watch to see inv-b cordoned',
      () => inventory.nodeStatus().get('inv-b')?.schedulable === false,
      10_000,
      100,
    );
    assert.equal(changes, 1);
    await waitFor(
      'inv-a without its deleted agent, cordoned inv-b not expected to have one',
      () => inventory.coverage().missing.join(',') === 'inv-a',
      10_000,
      100,
    );
  } finally {
    await inventory.stop();
    for (const n of ['inv-a', 'inv-b', 'inv-c']) await core.deleteNode({ name: n });
  }
});

async function startCollectorProcess(): Promise<{ collector: Proc; agents: Proc[]; url: string }> {
  return startCollectorProcessAs({ kubeconfig: saKubeconfig, namespace: NS, sweepNamespace: sweepNs });
}

/**
 * No kube-proxy watches this apiserver, so the dataplane never shows the dummy
 * Services and the sweep waits at its first step: the window to interrupt it.
 * The sweep starts at a step above 0, so nothing is ever sent to a ClusterIP.
 */
const SWEEP = {
  name: 'k8s sweep',
  serverNode: 'node-a',
  clientNode: 'node-b',
  durationSeconds: 1,
  warmupSeconds: 0,
  rounds: 1,
  sampleIntervalMs: 0,
};

test('the collector process: a sweep whose dataplane never syncs fails, and its objects are removed', async () => {
  const { collector, agents, url } = await startCollectorProcess();
  try {
    const res = await getJson(`${url}/v1/runs`, {
      method: 'POST',
      body: JSON.stringify({ ...SWEEP, serviceScale: { steps: [40], endpointsPerService: 2, syncTimeoutSeconds: 3 } }),
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const run = await waitFor(
      'the run to end',
      async () => {
        const r = (await getJson(`${url}/v1/runs/${res.body.id}`)).body;
        return ['succeeded', 'failed', 'cancelled'].includes(r.state) ? r : undefined;
      },
      60_000,
      250,
    );
    assert.equal(run.state, 'failed');
    assert.match(run.reason, /dataplane not in sync 3 s after programming 40 Services/);
    assert.match(run.reason, /KUBE-SERVICES has \d+ of \d+ rules/);
    assert.deepEqual(await counts(sweepNs), { services: 0, slices: 0 });
  } finally {
    await Promise.all(agents.map((a) => stop(a)));
    await stop(collector);
  }
});

test('the collector process: SIGTERM in the middle of a sweep removes every object of the run', async () => {
  const { collector, agents, url } = await startCollectorProcess();
  try {
    const res = await getJson(`${url}/v1/runs`, {
      method: 'POST',
      body: JSON.stringify({
        ...SWEEP,
        serviceScale: { steps: [80], endpointsPerService: 2, syncTimeoutSeconds: 600 },
      }),
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    await waitFor(
      '80 dummy Services in the apiserver',
      async () => (await counts(sweepNs, `${ALL_MANAGED},cni-bench.io/run-id=${res.body.id}`)).services === 80,
      30_000,
      200,
    );
    collector.child.kill('SIGTERM');
    const code = await collector.exited;
    assert.equal(code, 0, collector.output());
    assert.deepEqual(await counts(sweepNs), { services: 0, slices: 0 });
  } finally {
    await Promise.all(agents.map((a) => stop(a)));
    await stop(collector);
  }
});
