/**
 * The cluster description the real collector process detects from a real
 * kube-apiserver (the harness), acting as the Helm chart's collector
 * ServiceAccount (so every read passes the chart's RBAC): Nodes carrying a
 * CNI's own annotations and nodeInfo, kubeadm's kube-system/kube-proxy
 * ConfigMap, Cilium's cilium-config. Shown through GET /v1/cluster and through
 * a run's stored description; a malformed ConfigMap and a withdrawn grant
 * each become a note, never a default. The objects come from
 * test/fixtures/cluster, the same the unit tests use.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  CoreV1Api,
  type KubeConfig,
  type KubernetesObject,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1ConfigMap,
  type V1Node,
} from '@kubernetes/client-node';
import { createAll, installCollectorIdentity, kubeConfigFrom, renderChart } from '../support/harness/apply.js';
import { startCollectorProcess } from '../support/harness/collector-process.js';
import { type ControlPlane, startControlPlane } from '../support/harness/control-plane.js';
import { fixture } from '../support/helpers/fixtures.js';
import { getJson, stop, waitFor } from '../support/helpers/procs.js';

const NS = 'cni-bench';
const RELEASE = 'cni-bench-agent';
let cp: ControlPlane;
let admin: KubeConfig;
let core: CoreV1Api;
let identity: { kubeconfig: string; sweepNamespace: string };

const nodesOf = (name: string): V1Node[] => (JSON.parse(fixture(`cluster/${name}.json`)) as { items: V1Node[] }).items;
const configMap = (name: string): V1ConfigMap => JSON.parse(fixture(`cluster/${name}.json`)) as V1ConfigMap;

before(async () => {
  cp = await startControlPlane({});
  admin = kubeConfigFrom(cp.adminKubeconfig);
  core = admin.makeApiClient(CoreV1Api);
  identity = await installCollectorIdentity(cp, RELEASE, NS);
  // Nodes as flannel's kube subnet manager annotates them, with the kubelet's nodeInfo and the cloud's instance type.
  for (const n of nodesOf('nodes-flannel-vxlan')) {
    const created = await core.createNode({ body: { metadata: n.metadata } });
    await core.replaceNodeStatus({ name: n.metadata?.name ?? '', body: { ...created, status: n.status } });
  }
  // kube-proxy's ConfigMap, its config.conf the configuration the real kube-proxy v1.37 writes for nftables mode.
  await core.createNamespacedConfigMap({ namespace: 'kube-system', body: configMap('kube-proxy-written-nftables') });
});

after(async () => {
  await cp?.stop();
});

interface ClusterView {
  description: Record<string, unknown> & { notes?: string[]; evidence?: string[] };
}

/** GET /v1/cluster until `ok` holds (the collector re-reads the API when its last reading is over 5 s old). */
async function clusterUntil(
  url: string,
  what: string,
  ok: (d: ClusterView['description']) => boolean,
): Promise<ClusterView['description']> {
  let last: unknown;
  return waitFor(
    what,
    async () => {
      const r = await getJson(`${url}/v1/cluster`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      last = r.body.description;
      return ok(r.body.description) ? (r.body.description as ClusterView['description']) : undefined;
    },
    20_000,
    500,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last description: ${JSON.stringify(last)}`);
  });
}

test('the collector process describes the cluster from the API, and a run carries the description', async () => {
  const { collector, agents, url } = await startCollectorProcess({ ...identity, namespace: NS });
  try {
    const d = (await getJson(`${url}/v1/cluster`)).body.description as ClusterView['description'];
    process.stdout.write(`# detected: ${JSON.stringify({ ...d, evidence: undefined })}\n`);
    assert.match(String(d.kubernetesVersion), /^v1\.\d+\.\d+/);
    assert.deepEqual(
      {
        cni: d.cni,
        cniMode: d.cniMode,
        kubeProxyMode: d.kubeProxyMode,
        kernel: d.kernel,
        osImage: d.osImage,
        containerRuntime: d.containerRuntime,
        nodeType: d.nodeType,
        notes: d.notes,
      },
      {
        cni: 'flannel',
        cniMode: 'vxlan',
        kubeProxyMode: 'nftables',
        kernel: '6.1.0-28-amd64',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        containerRuntime: 'containerd://1.7.24',
        nodeType: 'm6i.large',
        notes: [],
      },
    );
    assert.ok(
      d.evidence?.includes('configmap kube-system/kube-proxy key config.conf: mode nftables'),
      JSON.stringify(d.evidence),
    );

    // A run started now carries it; where the agents' own rules on this host show another kube-proxy mode, the description says both.
    const run = (
      await getJson(`${url}/v1/runs`, {
        method: 'POST',
        body: JSON.stringify({
          name: 'describe',
          serverNode: 'node-a',
          clientNode: 'node-b',
          durationSeconds: 1,
          warmupSeconds: 0,
          rounds: 1,
          sampleIntervalMs: 0,
          serviceScale: { steps: [5], endpointsPerService: 1, syncTimeoutSeconds: 1 },
        }),
      })
    ).body;
    const stored = await waitFor(
      'the run to record its cluster',
      async () => (await getJson(`${url}/v1/runs/${run.id}`)).body.cluster?.description,
      20_000,
      200,
    );
    const dp = (await getJson(`${url}/v1/runs/${run.id}`)).body.cluster.server.dataplane ?? {};
    const agentsSee = dp.kubeProxyNftables
      ? 'nftables'
      : dp.kubeServices
        ? 'iptables'
        : dp.bpfMapCount > 0
          ? 'none (eBPF service handling?)'
          : 'unknown';
    assert.equal(stored.cni, 'flannel');
    assert.equal(stored.cniMode, 'vxlan');
    assert.equal(
      stored.kubeProxyMode,
      ['nftables', 'unknown'].includes(agentsSee) ? 'nftables' : `nftables (API) / ${agentsSee} (agents' rules)`,
    );
    process.stdout.write(`# run ${run.id}: kube-proxy ${stored.kubeProxyMode} (this host's agents see ${agentsSee})\n`);
    await waitFor(
      'the run to end',
      async () => ['succeeded', 'failed', 'cancelled'].includes((await getJson(`${url}/v1/runs/${run.id}`)).body.state),
      30_000,
      250,
    );
  } finally {
    await Promise.all(agents.map((a) => stop(a)));
    await stop(collector);
  }
});

test('Cilium: cilium-config gives the mode and kube-proxy replacement; a malformed kube-proxy ConfigMap and a withdrawn grant are notes', async () => {
  const { collector, agents, url } = await startCollectorProcess({ ...identity, namespace: NS, agents: ['node-a'] });
  try {
    // Nodes as Cilium annotates them with --annotate-k8s-node, instead of flannel's.
    const patch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const flannelOff = Object.fromEntries(
      Object.keys(nodesOf('nodes-flannel-vxlan')[0]!.metadata!.annotations!)
        .filter((k) => k.startsWith('flannel.'))
        .map((k) => [k, null]),
    );
    for (const [i, n] of nodesOf('nodes-flannel-vxlan').entries()) {
      const cilium = nodesOf('nodes-cilium-annotated')[i % 2]!.metadata!.annotations!;
      await core.patchNode(
        { name: n.metadata?.name ?? '', body: { metadata: { annotations: { ...flannelOff, ...cilium } } } },
        patch,
      );
    }
    await core.createNamespacedConfigMap({ namespace: 'kube-system', body: configMap('cilium-config-native-kpr') });
    const cilium = await clusterUntil(url, 'Cilium in the description', (d) => d.cni === 'cilium');
    assert.deepEqual(
      [cilium.cniMode, cilium.kubeProxyMode],
      ['native routing + wireguard', 'none (Cilium kube-proxy replacement)'],
    );
    assert.match(
      (cilium.notes ?? []).join('\n'),
      /cilium-config replaces kube-proxy, yet configmap kube-system\/kube-proxy sets mode nftables/,
    );

    // kube-proxy's ConfigMap broken: a coded note naming the ConfigMap and key, and no mode made up.
    await core.deleteNamespacedConfigMap({ name: 'cilium-config', namespace: 'kube-system' });
    await core.replaceNamespacedConfigMap({
      name: 'kube-proxy',
      namespace: 'kube-system',
      body: configMap('kube-proxy-not-yaml'),
    });
    const broken = await clusterUntil(url, 'the malformed kube-proxy config noted', (d) =>
      (d.notes ?? []).some((n) => n.includes('E_PARSE')),
    );
    assert.equal(broken.kubeProxyMode, undefined);
    assert.match(
      (broken.notes ?? []).join('\n'),
      /kube-proxy mode unknown: E_PARSE configmap kube-system\/kube-proxy key config\.conf: not YAML/,
    );

    // The chart's grant withdrawn (what rbac.clusterDescription.read=false renders): a 403, reported as the missing grant.
    await core.replaceNamespacedConfigMap({
      name: 'kube-proxy',
      namespace: 'kube-system',
      body: configMap('kube-proxy-written-nftables'),
    });
    const role = renderChart(RELEASE, NS).find(
      (o) => o.kind === 'Role' && o.metadata?.name?.endsWith('-cluster-description'),
    ) as KubernetesObject;
    await admin
      .makeApiClient(RbacAuthorizationV1Api)
      .deleteNamespacedRole({ name: role.metadata?.name ?? '', namespace: 'kube-system' });
    const refused = await clusterUntil(url, 'the refused read noted', (d) =>
      (d.notes ?? []).some((n) => n.includes('may not get it')),
    );
    assert.equal(refused.kubeProxyMode, undefined);
    assert.ok(
      refused.notes?.includes(
        'configmap kube-system/kube-proxy not read: the collector may not get it (grant get configmaps/kube-proxy in kube-system, chart value rbac.clusterDescription.read)',
      ),
      JSON.stringify(refused.notes),
    );
    await createAll(admin, [role]);
    await clusterUntil(url, 'the mode back once the grant is', (d) => d.kubeProxyMode === 'nftables');
  } finally {
    await Promise.all(agents.map((a) => stop(a)));
    await stop(collector);
  }
});
