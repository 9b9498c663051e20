/**
 * The cluster path of the policy conditions on real Cilium: the real collector
 * process (dist/collector/main.js) in Kubernetes mode, authenticated as the
 * chart's collector ServiceAccount with the chart's RBAC, admission policy and
 * both opt-ins (rbac.networkPolicy.enabled, rbac.ciliumNetworkPolicy.enabled),
 * against the apiserver of a 3-node `cilium` lab (real cilium-agents enforcing
 * policy on pod identities; no kube-proxy), with the lab's agents connected.
 *
 * networkPolicy: the collector labels the run's server and client agent pods
 * with their role (the only pod change its admission policy allows), creates a
 * NetworkPolicy selecting them by that label, and counts it only when Cilium
 * refuses the agent in no role of the run and lets the clients through; it
 * measures beside the condition's own baseline, deletes the policy, takes the
 * labels off and verifies the denied agent connects again.
 *
 * l7Policy: the collector creates a CiliumNetworkPolicy with an HTTP rule; this
 * lab has no Envoy (cilium-config enable-l7-proxy=false), so the rule is never
 * seen in force, and the phase fails with what the probes saw and why, with no
 * value; the revert deletes it and verifies both paths answer again.
 *
 * Afterwards nothing labelled is left: no policy, no CiliumNetworkPolicy, no
 * pod with the role label. Long (a 3-node Cilium lab and four measured
 * phases): CNI_BENCH_LONG_TESTS=1.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api, CustomObjectsApi, type KubeConfig, NetworkingV1Api } from '@kubernetes/client-node';
import { CNP, l7Selector } from '../../collector/kubernetes/l7-objects.js';
import { POLICY_ROLE_LABEL, policySelector } from '../../collector/kubernetes/policy-objects.js';
import { createLogger } from '../../core/log.js';
import type { CiliumLab } from '../../lab/cilium/dataplane.js';
import { Lab } from '../../lab/lab.js';
import { kubeConfigFrom } from '../support/harness/apply.js';
import type { ControlPlane } from '../support/harness/control-plane.js';
import { ciliumLeftovers, NOTHING_LEFT } from '../support/helpers/cilium-state.js';
import { chartCollectorIdentity } from '../support/helpers/collector-identity.js';
import { conditionsReport, startKubeCollector } from '../support/helpers/kube-collector.js';
import { type Proc, stop } from '../support/helpers/procs.js';
import { postRun, runEnded } from '../support/helpers/rest-runs.js';
import { notLong } from '../support/helpers/root.js';

const NS = 'cni-bench';
const RELEASE = 'cni-bench-agent';
const log = createLogger({ test: 'k8s-collector-cilium-policy' }, 'warn');

const SCENARIO = {
  name: 'cluster policy on Cilium',
  durationSeconds: 1,
  warmupSeconds: 0,
  rounds: 2,
  roundSleepSeconds: 0,
  sampleIntervalMs: 0,
  serverNode: 'lab-n0',
  clientNode: 'lab-n1',
  measurements: [{ id: 'crr-pod', kind: 'rr', path: 'pod-to-pod', mode: 'crr' }],
  conditions: { networkPolicy: { policies: 1 }, l7Policy: { urlPath: '/' } },
};

/** What the run labelled that is still there: policies, L7 rules, pods with the role label. */
async function leftInApi(admin: KubeConfig): Promise<string[]> {
  const policies = await admin
    .makeApiClient(NetworkingV1Api)
    .listNamespacedNetworkPolicy({ namespace: NS, labelSelector: policySelector() });
  const cnps = (await admin
    .makeApiClient(CustomObjectsApi)
    .listNamespacedCustomObject({ ...CNP, namespace: NS, labelSelector: l7Selector() })) as {
    items: { metadata: { name: string } }[];
  };
  const pods = await admin
    .makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace: NS, labelSelector: POLICY_ROLE_LABEL });
  return [
    ...policies.items.map((p) => `NetworkPolicy ${p.metadata?.name}`),
    ...cnps.items.map((p) => `CiliumNetworkPolicy ${p.metadata.name}`),
    ...pods.items.map((p) => `Pod ${p.metadata?.name} ${POLICY_ROLE_LABEL}=${p.metadata?.labels?.[POLICY_ROLE_LABEL]}`),
  ];
}

test('the collector in Kubernetes mode on Cilium: a NetworkPolicy by pod role enforced and measured, an L7 rule refused for want of Envoy, both reverted', {
  skip: notLong,
  timeout: 1_500_000,
}, async (t) => {
  const lab = await Lab.create({ nodes: 3, log, proxy: { mode: 'cilium' }, shareCpus: true });
  const id = lab.plan.id;
  const cilium = lab.services as unknown as CiliumLab;
  let collector: Proc | undefined;
  try {
    const cp = cilium.controlPlane as unknown as ControlPlane;
    const admin = kubeConfigFrom(cp.adminKubeconfig);
    const { kubeconfig, sweepNamespace } = await chartCollectorIdentity(cp, RELEASE, NS, [
      'rbac.networkPolicy.enabled=true',
      'rbac.ciliumNetworkPolicy.enabled=true',
    ]);
    const { proc: c, url } = await startKubeCollector(lab, {
      kubeconfig,
      namespace: NS,
      sweepNamespace,
      // What the chart sets with the two opt-ins.
      env: { CNI_BENCH_ALLOW_NETWORK_POLICY: 'true', CNI_BENCH_ALLOW_CILIUM_NETWORK_POLICY: 'true' },
    });
    collector = c;
    assert.deepEqual(await leftInApi(admin), [], 'nothing labelled before the run');

    const runId = await postRun(url, SCENARIO);
    const began = Date.now();
    const run = await runEnded(url, runId, 1_200_000);
    t.diagnostic(`run ${run.state} in ${((Date.now() - began) / 1000).toFixed(0)} s: ${run.reason ?? ''}`);
    const { steps, rows } = await conditionsReport(url, runId, (line) => t.diagnostic(line));
    // The L7 phase fails (no Envoy); the policy condition's phases succeed.
    assert.equal(run.state, 'failed', `${run.reason}\n${c.output().slice(-3000)}`);

    const policy = steps.filter((s) => s.group === 'networkPolicy');
    assert.deepEqual(
      policy.map((s) => [s.action, s.status]),
      [
        ['apply', 'succeeded'],
        ['revert', 'succeeded'],
      ],
      `${JSON.stringify(policy)}\n${c.output().slice(-3000)}`,
    );
    assert.match(
      policy[0]?.how ?? '',
      /^1 NetworkPolicies in cni-bench select the server's pod by cni-bench\.io\/policy-role=server and let in cni-bench\.io\/policy-role=client: \S+ is blocked \((timeout|refused|unreachable)\), the clients \S+/,
    );
    assert.ok((policy[0]?.enforcementMs ?? -1) >= 0, 'an enforcement time');
    assert.match(
      policy[1]?.how ?? '',
      /^1 NetworkPolicies deleted by the run's label and cni-bench\.io\/policy-role taken off [2-9] pods; the denied agent \S+ connects to the server again/,
    );
    const row = rows.find((r) => r.group === 'networkPolicy');
    assert.ok(row && (row.baseline ?? 0) > 0 && (row.value ?? 0) > 0 && row.verdict, JSON.stringify(row));
    assert.equal(row.error, '');

    const l7 = steps.filter((s) => s.group === 'l7Policy');
    const l7Apply = l7.find((s) => s.action === 'apply');
    assert.equal(l7Apply?.status, 'failed', JSON.stringify(l7));
    assert.match(
      l7Apply?.how ?? '',
      /HTTP rule not enforced 60 s after the CiliumNetworkPolicy was created: from \S+, GET \/cni-bench-l7-denied got .*; a denied path must get the proxy's 403 and the allowed one 2xx\. cilium-config has enable-l7-proxy=false: Cilium's Envoy proxy is off/,
    );
    assert.equal(rows.find((r) => r.group === 'l7Policy')?.value ?? null, null, 'l7Policy: no value');
    const l7Revert = l7.find((s) => s.action === 'revert');
    assert.equal(l7Revert?.status, 'succeeded', JSON.stringify(l7Revert));
    assert.match(l7Revert?.how ?? '', /^1 CiliumNetworkPolicy deleted by the run's label .* answers 2xx again/);

    assert.deepEqual(await leftInApi(admin), [], 'nothing labelled left after the run');
    assert.doesNotMatch(c.output(), /condition revert failed/, 'every revert was verified');
  } finally {
    await stop(collector);
    await lab.destroy();
  }
  assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
});
