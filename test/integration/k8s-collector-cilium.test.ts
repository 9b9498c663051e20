/**
 * The collector as a cluster runs it, against real Cilium: the real collector
 * process (dist/collector/main.js) in Kubernetes mode, authenticated as the
 * chart's collector ServiceAccount with the chart's RBAC, talking to the
 * apiserver of a 2-node `cilium` lab (real cilium-agents, kube-proxy
 * replacement, no kube-proxy anywhere), with the lab's agents connected to it
 * over gRPC. One run: a Service measurement and a small scale sweep. The
 * collector creates the Services and EndpointSlices through the API; Cilium
 * programs them; the collector counts them programmed only when the agents'
 * samples show Cilium's own LB state (the Service's frontend with its backend
 * in cilium_lb4_services_v2/backends_v3 on the client's node, and every node's
 * count of frontends with all their backends at each step), which the run
 * records. The Cluster line is what this collector detected: cilium with the
 * version each node's cilium-agent reported, and no kube-proxy.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api, DiscoveryV1Api } from '@kubernetes/client-node';
import { ALL_MANAGED } from '../../collector/kubernetes/objects.js';
import { createLogger } from '../../core/log.js';
import type { CiliumLab } from '../../lab/cilium/dataplane.js';
import { CILIUM_VERSION } from '../../lab/k8s/tools.js';
import { Lab } from '../../lab/lab.js';
import { kubeConfigFrom } from '../support/harness/apply.js';
import { startLabKubernetesCollector } from '../support/harness/collector-process.js';
import type { ControlPlane } from '../support/harness/control-plane.js';
import { ciliumLeftovers, NOTHING_LEFT } from '../support/helpers/cilium-state.js';
import { chartCollectorIdentity } from '../support/helpers/collector-identity.js';
import { getJson, type Proc, stop } from '../support/helpers/procs.js';
import { agentsConnected, postRun, runEnded } from '../support/helpers/rest-runs.js';
import { notRoot } from '../support/helpers/root.js';

const NS = 'cni-bench';
const RELEASE = 'cni-bench-agent';
const log = createLogger({ test: 'k8s-collector-cilium' }, 'warn');
const STEPS = [0, 40];

const SCENARIO = {
  name: 'k8s collector on Cilium',
  durationSeconds: 1,
  warmupSeconds: 0,
  rounds: 1,
  roundSleepSeconds: 0,
  sampleIntervalMs: 0,
  serviceScale: { steps: STEPS, endpointsPerService: 2, syncTimeoutSeconds: 180 },
  measurements: [{ id: 'rr-service', kind: 'rr', path: 'service', mode: 'rr' }],
};

interface SyncTargetJson {
  kubeServicesRules?: number;
  nftServiceIps?: number;
  ciliumFrontends?: number;
  ciliumFrontend?: { address: string; port: number; backends: string[] };
}

test('the collector process in Kubernetes mode against a Cilium lab: Services synchronised from Cilium LB state', {
  skip: notRoot,
  timeout: 900_000,
}, async (t) => {
  const lab = await Lab.create({ nodes: 2, log, proxy: { mode: 'cilium' }, shareCpus: true });
  const id = lab.plan.id;
  const cilium = lab.services as unknown as CiliumLab;
  let collector: Proc | undefined;
  try {
    const cp = cilium.controlPlane as unknown as ControlPlane;
    // The chart's RBAC (namespaces the lab already made kept), the sweep namespace, and a token for its ServiceAccount.
    const { kubeconfig, sweepNamespace } = await chartCollectorIdentity(cp, RELEASE, NS);
    const admin = kubeConfigFrom(cp.adminKubeconfig);
    const started = await startLabKubernetesCollector({ kubeconfig, namespace: NS, sweepNamespace }, lab);
    collector = started.proc;
    const c = collector;
    const url = started.url;
    lab.startAgents(`unix:${lab.controlSocket}`);
    await agentsConnected(url, lab.agentCount, 60_000);

    const runId = await postRun(url, SCENARIO);
    const run = await runEnded(url, runId, 600_000);
    assert.equal(run.state, 'succeeded', `${run.reason}\n${c.output().slice(-4000)}`);
    const report = (await getJson(`${url}/v1/runs/${runId}/report?format=json`)).body;

    // The Cluster line: what this collector detected (cilium-config through the API, the version from each node's cilium-agent).
    const d = report.cluster.description;
    assert.equal(d.cni, `cilium ${CILIUM_VERSION.slice(1)}`, JSON.stringify(d));
    assert.equal(d.cniMode, 'native routing');
    assert.equal(d.kubeProxyMode, 'none (Cilium kube-proxy replacement)');

    // The Service path: the client's node counted it programmed when Cilium's LB map had its frontend with the server as backend.
    const targets = (
      run.phases as {
        detail: { target?: { host: string; via: string; syncMs?: number; syncTarget?: SyncTargetJson } };
      }[]
    )
      .map((p) => p.detail.target)
      .filter((x) => x !== undefined);
    assert.ok(targets.length >= STEPS.length, JSON.stringify(targets));
    const synced = targets.filter((x) => x.syncTarget);
    assert.equal(synced.length, 1, 'one Service, waited for once');
    const st = synced[0]!.syncTarget!;
    assert.equal(st.kubeServicesRules, undefined, 'no KUBE-SERVICES to wait for');
    assert.equal(st.ciliumFrontend?.address, synced[0]!.host);
    assert.equal(st.ciliumFrontend?.backends.length, 1);
    assert.ok(synced[0]!.host.startsWith('198.19.'), synced[0]!.host);

    // The sweep: every agent's node at its own Cilium frontend baseline + the step.
    const scale = (
      run.phases as {
        detail: {
          scale?: { services: number };
          expect: Record<string, SyncTargetJson>;
          nodes: Record<string, { ciliumFrontends: number | null; kubeServicesRules: number }>;
          syncMs: number;
        };
      }[]
    )
      .map((p) => p.detail)
      .filter((x) => x.scale);
    assert.deepEqual(
      scale.map((x) => x.scale?.services),
      STEPS,
    );
    const agents = Object.keys(scale[0]?.expect ?? {});
    assert.equal(agents.length, lab.agentCount);
    for (const step of scale) {
      for (const a of agents) {
        const want = step.expect[a]?.ciliumFrontends;
        const base = scale[0]?.expect[a]?.ciliumFrontends;
        assert.ok(
          typeof want === 'number' && typeof base === 'number',
          `${a}: a Cilium target ${JSON.stringify(step.expect[a])}`,
        );
        assert.equal(want - base, step.scale?.services);
        assert.equal(step.expect[a]?.kubeServicesRules, undefined, `${a}: no kube-proxy target`);
        assert.ok(
          (step.nodes[a]?.ciliumFrontends ?? -1) >= want,
          `${a} showed ${step.nodes[a]?.ciliumFrontends} >= ${want}`,
        );
      }
    }
    // Measured through the Service Cilium programmed, at both steps, with Cilium's translation evidence and no KUBE-SEP counter.
    const rows = (
      report.rows as { path: string; status: string; value: number | null; dnatConnections: number | null }[]
    ).filter((r) => r.path === 'service');
    assert.equal(rows.length, STEPS.length);
    for (const r of rows) {
      assert.equal(r.status, 'succeeded');
      assert.ok((r.value ?? 0) > 0, JSON.stringify(r));
    }
    // The collector removed its objects.
    const core = admin.makeApiClient(CoreV1Api);
    const discovery = admin.makeApiClient(DiscoveryV1Api);
    for (const ns of [NS, sweepNamespace]) {
      assert.equal((await core.listNamespacedService({ namespace: ns, labelSelector: ALL_MANAGED })).items.length, 0);
      assert.equal(
        (await discovery.listNamespacedEndpointSlice({ namespace: ns, labelSelector: ALL_MANAGED })).items.length,
        0,
      );
    }
    t.diagnostic(
      `Service ${synced[0]!.host}:${st.ciliumFrontend?.port} in the client's Cilium LB after ${synced[0]!.syncMs} ms; steps ${scale
        .map(
          (x) =>
            `${x.scale?.services}: sync ${x.syncMs} ms, frontends ${agents.map((a) => x.nodes[a]?.ciliumFrontends).join('/')}`,
        )
        .join('; ')}; cluster "${d.cni} / ${d.cniMode} / ${d.kubeProxyMode}"`,
    );
  } finally {
    await stop(collector);
    await lab.destroy();
  }
  assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
});
