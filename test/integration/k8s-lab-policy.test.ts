/**
 * The cluster path of the policy conditions, end to end with real parts: the
 * real collector process (dist/collector/main.js) in Kubernetes mode,
 * authenticated as the chart's collector ServiceAccount with the chart's RBAC
 * and the policy opt-in (rbac.networkPolicy.enabled=true), against the real
 * apiserver of a 3-node iptables lab whose NetworkPolicies kube-router v2.1.0's
 * policy controller enforces in every node (`--policy-enforcer`). The
 * collector creates labelled NetworkPolicies through the API, verifies them in
 * the dataplane through the agents (the fourth agent, in no role of the run,
 * refused; the clients through), measures beside the baseline, deletes them by
 * label and verifies the denied agent connects again; Hubble, L7 and
 * encryption are refused with what the cluster has (no cilium-config). A
 * second run is cancelled, and a third stopped by SIGTERM to the collector,
 * while their policies are in force: nothing labelled is left in the
 * apiserver after any of them, and no revert failed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type KubeConfig, NetworkingV1Api } from '@kubernetes/client-node';
import { policySelector } from '../../collector/kubernetes/policy-objects.js';
import { createLogger } from '../../core/log.js';
import { Lab } from '../../lab/lab.js';
import { kubeConfigFrom } from '../support/harness/apply.js';
import { startLabKubernetesCollector } from '../support/harness/collector-process.js';
import type { ControlPlane } from '../support/harness/control-plane.js';
import { chartCollectorIdentity } from '../support/helpers/collector-identity.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { getJson, type Proc, stop, waitFor } from '../support/helpers/procs.js';
import { agentsConnected, postRun, runEnded } from '../support/helpers/rest-runs.js';
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

/** Waits until the run's apply phase succeeded (its policies in force), failing if the run ends first. */
async function untilApplied(url: string, runId: string): Promise<void> {
  await waitFor(
    'the policies in force',
    async () => {
      const r = (await getJson(`${url}/v1/runs/${runId}`)).body;
      if (r.state !== 'running' && r.state !== 'pending') throw new Error(`run ended first: ${r.state} ${r.reason}`);
      return (r.phases as { name: string; state: string }[]).some(
        (p) => p.name.startsWith('apply') && p.state === 'succeeded',
      )
        ? true
        : undefined;
    },
    600_000,
    500,
  );
}

interface Step {
  action: string;
  condition: string;
  group: string;
  status: string;
  how: string;
  enforcementMs?: number;
}
interface Row {
  measurement: string;
  condition: string;
  group: string;
  baseline: number | null;
  value: number | null;
  change: number | null;
  verdict?: string;
  error: string;
  unit: string;
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
    // The chart's identity with the policy opt-in, and its sweep namespace (made by the chart).
    const identity = await chartCollectorIdentity(cp, RELEASE, NS, ['rbac.networkPolicy.enabled=true']);
    const started = await startLabKubernetesCollector({ ...identity, namespace: NS }, lab, {
      CNI_BENCH_ALLOW_NETWORK_POLICY: 'true',
    });
    collector = started.proc;
    const url = started.url;
    lab.startAgents(`unix:${lab.controlSocket}`);
    await agentsConnected(url, lab.agentCount, 60_000);

    const runId = await postRun(url, {
      ...BASE,
      name: 'cluster policy',
      conditions: { networkPolicy: { policies: 3 }, hubble: {}, l7Policy: {}, encryption: {} },
    });
    const c = collector;
    const run = await runEnded(url, runId, 600_000);
    const report = (await getJson(`${url}/v1/runs/${runId}/report?format=json`)).body;
    const steps = (report.conditions?.steps ?? []) as Step[];
    const rows = (report.conditions?.rows ?? []) as Row[];
    for (const s of steps)
      t.diagnostic(`${s.action} ${s.condition}: ${s.status}; enforcement ${s.enforcementMs ?? '-'} ms; ${s.how}`);
    for (const r of rows)
      t.diagnostic(
        `${r.measurement} [${r.condition}]: baseline ${r.baseline?.toFixed(0)} ${r.unit}, under it ${r.value?.toFixed(0) ?? '-'}, change ${r.change === null ? '-' : `${(r.change * 100).toFixed(1)}%`}, ${r.verdict ?? r.error}`,
      );
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
      /^3 NetworkPolicies in cni-bench select the agents: .* is blocked .* the clients .* connect/,
    );
    assert.ok((policy[0]?.enforcementMs ?? -1) >= 0, 'an enforcement time');
    assert.match(
      policy[1]?.how ?? '',
      /^3 NetworkPolicies deleted by the run's label; the denied agent .* connects to the server again/,
    );
    const row = rows.find((r) => r.group === 'networkPolicy');
    assert.ok(row && (row.baseline ?? 0) > 0 && (row.value ?? 0) > 0 && row.verdict, JSON.stringify(row));
    assert.equal(row.error, '');
    for (const [group, why] of [
      ['hubble', /no cilium-config in kube-system/],
      ['l7Policy', /L7 policy is a Cilium feature/],
      ['encryption', /transparent encryption is a Cilium feature/],
    ] as const) {
      const apply = steps.find((s) => s.group === group && s.action === 'apply');
      assert.equal(apply?.status, 'failed', group);
      assert.match(apply?.how ?? '', why);
      assert.equal(rows.find((r) => r.group === group)?.value, null, `${group}: no value`);
    }
    assert.deepEqual(await labelledPolicies(admin), [], 'no labelled policy left after the run');

    // Cancelled while the policies are in force: cleanup deletes them and verifies the revert.
    const cancelled = await postRun(url, {
      ...BASE,
      // Short before the apply (the run's baseline and the group's own), and 15 s under the policies to act in.
      durationSeconds: 15,
      rounds: 1,
      name: 'cluster policy, cancelled',
      conditions: { networkPolicy: { policies: 4 } },
    });
    await untilApplied(url, cancelled);
    assert.equal((await labelledPolicies(admin)).length, 4, 'four policies in force');
    const del = await getJson(`${url}/v1/runs/${cancelled}`, { method: 'DELETE' });
    assert.equal(del.status, 202, JSON.stringify(del.body));
    const ended = await runEnded(url, cancelled, 300_000, 'the cancelled run to end');
    assert.equal(ended.state, 'cancelled');
    assert.deepEqual(await labelledPolicies(admin), [], 'no labelled policy left after cancel');
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
    await untilApplied(url, second);
    assert.equal((await labelledPolicies(admin)).length, 5, 'five policies in force');
    collector.child.kill('SIGTERM');
    const code = await collector.exited;
    t.diagnostic(`collector exited with ${code} after SIGTERM`);
    assert.deepEqual(
      await labelledPolicies(admin),
      [],
      `no labelled policy left after SIGTERM\n${collector.output().slice(-3000)}`,
    );
    assert.doesNotMatch(collector.output(), /condition revert failed/, 'the revert was verified');
    collector = undefined;
  } finally {
    if (collector) await stop(collector);
    await lab.destroy();
  }
  assert.deepEqual(labNamespaces(labId), []);
});
