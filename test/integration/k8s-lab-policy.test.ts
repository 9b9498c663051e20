/**
 * The cluster path of the policy conditions, end to end with real parts: the
 * real collector process (dist/collector/main.js) in Kubernetes mode,
 * authenticated as the chart's collector ServiceAccount with the chart's RBAC
 * and the policy opt-in (rbac.networkPolicy.enabled=true), against the real
 * apiserver of a 3-node iptables lab whose NetworkPolicies kube-router v2.1.0's
 * policy controller enforces in every node (`--policy-enforcer`). The
 * collector labels the run's agent pods with their role (the only pod change
 * the chart's admission policy lets it make), creates labelled NetworkPolicies
 * selecting them by it through the API, verifies them in
 * the dataplane through the agents (the fourth agent, in no role of the run,
 * refused; the clients through), measures beside the baseline, deletes them by
 * label, takes the role labels off and verifies the denied agent connects again; Hubble, L7 and
 * encryption are refused with what the cluster has (no cilium-config). A
 * second run is cancelled, and a third stopped by SIGTERM to the collector,
 * while their policies are in force: nothing labelled is left in the
 * apiserver after any of them, and no revert failed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api, type KubeConfig, NetworkingV1Api } from '@kubernetes/client-node';
import { POLICY_ROLE_LABEL, policySelector } from '../../collector/kubernetes/policy-objects.js';
import { createLogger } from '../../core/log.js';
import { Lab } from '../../lab/lab.js';
import { kubeConfigFrom } from '../support/harness/apply.js';
import type { ControlPlane } from '../support/harness/control-plane.js';
import { chartCollectorIdentity } from '../support/helpers/collector-identity.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { conditionsReport, startKubeCollector } from '../support/helpers/kube-collector.js';
import { getJson, type Proc, stop } from '../support/helpers/procs.js';
import { postRun, runEnded, untilApplied } from '../support/helpers/rest-runs.js';
import { notRoot } from '../support/helpers/root.js';

const NS = 'cni-bench';
const RELEASE = 'cni-bench-agent';
const log = createLogger({ test: 'k8s-lab-policy' }, 'warn');

const BASE = {
  durationSeconds: 1,
  warmupSeconds: 0,
  rounds: 2,
  roundSleepSeconds: 0,
  sampleIntervalMs: 0,
  serverNode: 'lab-n0',
  clientNode: 'lab-n1',
  measurements: [{ id: 'crr-pod', kind: 'rr', path: 'pod-to-pod', mode: 'crr' }],
};

async function labelledPolicies(admin: KubeConfig): Promise<string[]> {
  const list = await admin
    .makeApiClient(NetworkingV1Api)
    .listNamespacedNetworkPolicy({ namespace: NS, labelSelector: policySelector() });
  return list.items.map((p) => p.metadata?.name ?? '');
}

/** Pods that still carry the policy role label (any value): none once a run is over. */
async function rolePods(admin: KubeConfig): Promise<string[]> {
  const list = await admin
    .makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace: NS, labelSelector: POLICY_ROLE_LABEL });
  return list.items.map((p) => `${p.metadata?.name}=${p.metadata?.labels?.[POLICY_ROLE_LABEL]}`);
}

test('the collector in Kubernetes mode puts a NetworkPolicy condition in place through the API, verifies it through the agents, measures it and removes it; cancel and SIGTERM leave nothing', {
  skip: notRoot,
  timeout: 1_200_000,
}, async (t) => {
  const lab = await Lab.create({
    nodes: 3,
    log,
    proxy: { mode: 'iptables', iptablesBackend: 'legacy' },
    policyEnforcer: true,
    shareCpus: true,
  });
  const labId = lab.plan.id;
  let collector: Proc | undefined;
  try {
    const cp = lab.policy?.controlPlane as unknown as ControlPlane;
    assert.ok(cp, 'the lab runs its enforcer on its own apiserver');
    const admin = kubeConfigFrom(cp.adminKubeconfig);
    // The chart's identity with the opt-in: its RBAC and the admission policy narrowing patch on pods.
    const { kubeconfig, sweepNamespace } = await chartCollectorIdentity(cp, RELEASE, NS, [
      'rbac.networkPolicy.enabled=true',
    ]);
    const started = await startKubeCollector(lab, {
      kubeconfig,
      namespace: NS,
      sweepNamespace,
      env: { CNI_BENCH_ALLOW_NETWORK_POLICY: 'true' },
    });
    const url = started.url;
    collector = started.proc;
    const c = collector;
    const runId = await postRun(url, {
      ...BASE,
      name: 'cluster policy',
      conditions: { networkPolicy: { policies: 3 }, hubble: {}, l7Policy: {}, encryption: {} },
    });
    const run = await runEnded(url, runId, 600_000);
    const { steps, rows } = await conditionsReport(url, runId, (line) => t.diagnostic(line));
    // The refused conditions fail their phases; the policy condition's succeed.
    assert.equal(run.state, 'failed', `${run.reason}\n${c.output().slice(-3000)}`);
    assert.match(run.reason, /phases failed/);
    const policy = steps.filter((s) => s.group === 'networkPolicy');
    assert.deepEqual(
      policy.map((s) => [s.action, s.status]),
      [
        ['apply', 'succeeded'],
        ['revert', 'succeeded'],
      ],
      JSON.stringify(policy),
    );
    assert.match(
      policy[0]?.how ?? '',
      /^3 NetworkPolicies in cni-bench select the server's pod by cni-bench\.io\/policy-role=server and let in cni-bench\.io\/policy-role=client: .* is blocked .* the clients .* connect/,
    );
    assert.ok((policy[0]?.enforcementMs ?? -1) >= 0, 'an enforcement time');
    assert.match(
      policy[1]?.how ?? '',
      /^3 NetworkPolicies deleted by the run's label and cni-bench\.io\/policy-role taken off [1-9] pods; the denied agent .* connects to the server again/,
    );
    const row = rows.find((r) => r.group === 'networkPolicy');
    assert.ok(row && (row.baseline ?? 0) > 0 && (row.value ?? 0) > 0 && row.verdict, JSON.stringify(row));
    assert.equal(row.error, '');
    for (const [group, why] of [
      ['hubble', /no cilium-config in kube-system/],
      // Without its own opt-in, refused naming the chart value before anything is asked of the cluster.
      ['l7Policy', /may not create CiliumNetworkPolicies \(chart value rbac\.ciliumNetworkPolicy\.enabled=false\)/],
      ['encryption', /transparent encryption is a Cilium feature/],
    ] as const) {
      const apply = steps.find((s) => s.group === group && s.action === 'apply');
      assert.equal(apply?.status, 'failed', group);
      assert.match(apply?.how ?? '', why);
      assert.equal(rows.find((r) => r.group === group)?.value, null, `${group}: no value`);
    }
    assert.deepEqual(await labelledPolicies(admin), [], 'no labelled policy left after the run');
    assert.deepEqual(await rolePods(admin), [], 'no pod keeps the role label after the run');

    // Cancelled while the policies are in force: cleanup deletes them and verifies the revert.
    const cancelled = await postRun(url, {
      ...BASE,
      // Short before the apply (the run's baseline and the group's own), and 15 s under the policies to act in.
      durationSeconds: 15,
      rounds: 1,
      name: 'cluster policy, cancelled',
      conditions: { networkPolicy: { policies: 4 } },
    });
    await untilApplied(url, cancelled, 'the policies in force');
    assert.equal((await labelledPolicies(admin)).length, 4, 'four policies in force');
    const del = await getJson(`${url}/v1/runs/${cancelled}`, { method: 'DELETE' });
    assert.equal(del.status, 202, JSON.stringify(del.body));
    const ended = await runEnded(url, cancelled, 300_000, 'the cancelled run to end');
    assert.equal(ended.state, 'cancelled');
    assert.deepEqual(await labelledPolicies(admin), [], 'no labelled policy left after cancel');
    assert.deepEqual(await rolePods(admin), [], 'no pod keeps the role label after cancel');
    assert.doesNotMatch(collector.output(), /condition revert failed/, 'the revert was verified');

    // SIGTERM while the policies are in force: the collector reverts them before it exits.
    const second = await postRun(url, {
      ...BASE,
      // Short before the apply (the run's baseline and the group's own), and 15 s under the policies to act in.
      durationSeconds: 15,
      rounds: 1,
      name: 'cluster policy, SIGTERM',
      conditions: { networkPolicy: { policies: 5 } },
    });
    await untilApplied(url, second, 'the policies in force');
    assert.equal((await labelledPolicies(admin)).length, 5, 'five policies in force');
    collector.child.kill('SIGTERM');
    const code = await collector.exited;
    t.diagnostic(`collector exited with ${code} after SIGTERM`);
    assert.deepEqual(
      await labelledPolicies(admin),
      [],
      `no labelled policy left after SIGTERM\n${collector.output().slice(-3000)}`,
    );
    assert.deepEqual(await rolePods(admin), [], 'no pod keeps the role label after SIGTERM');
    assert.doesNotMatch(collector.output(), /condition revert failed/, 'the revert was verified');
    collector = undefined;
  } finally {
    if (collector) await stop(collector);
    await lab.destroy();
  }
  assert.deepEqual(labNamespaces(labId), []);
});
