/**
 * Hubble on against off as a cluster does it, end to end with real parts: the
 * real collector process (dist/collector/main.js) in Kubernetes mode, as the
 * chart's collector ServiceAccount with `rbac.ciliumConfig.write=true`,
 * against a 2-node `cilium` lab (real cilium-agents v1.20.2) and its apiserver,
 * the lab standing in for the DaemonSet controller (lab/cilium/rollout.ts).
 * The collector sets cilium-config's enable-hubble, rollout-restarts
 * daemonset/cilium through the API, and counts Hubble on only once every
 * agent reads its node's Hubble Ok and the server node's observer (asked by
 * the agent on hubble.sock) counts new flows and returns the clients' flows;
 * it measures beside the condition's own baseline, puts enable-hubble back,
 * rolls again and verifies off. A second run is stopped by SIGTERM to the
 * collector while Hubble is on: it is off again before the collector exits;
 * a third is stopped by SIGKILL with Hubble on, and the next collector puts
 * cilium-config back (from the mark it carries) and rolls Cilium as it starts.
 * Long (six rollouts): runs with CNI_BENCH_LONG_TESTS=1.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { readCiliumFeatures } from '../../agent/observe/cilium-features.js';
import { hubbleServerStatus, hubbleSocket } from '../../agent/observe/hubble-observer.js';
import { HUBBLE_BEFORE_ANNOTATION } from '../../collector/kubernetes/conditions-hubble.js';
import { createLogger } from '../../core/log.js';
import type { CiliumLab } from '../../lab/cilium/dataplane.js';
import { Lab } from '../../lab/lab.js';
import { kubeConfigFrom } from '../support/harness/apply.js';
import { startLabKubernetesCollector } from '../support/harness/collector-process.js';
import type { ControlPlane } from '../support/harness/control-plane.js';
import { ciliumLeftovers, NOTHING_LEFT } from '../support/helpers/cilium-state.js';
import { chartCollectorIdentity } from '../support/helpers/collector-identity.js';
import { conditionsReport } from '../support/helpers/kube-collector.js';
import { type Proc, stop } from '../support/helpers/procs.js';
import { agentsConnected, postRun, runEnded, untilApplied } from '../support/helpers/rest-runs.js';
import { notLong } from '../support/helpers/root.js';

const NS = 'cni-bench';
const log = createLogger({ test: 'k8s-lab-hubble' }, 'warn');

const BASE = {
  durationSeconds: 2,
  warmupSeconds: 0,
  rounds: 3,
  roundSleepSeconds: 0,
  sampleIntervalMs: 0,
  serverNode: 'lab-n0',
  clientNode: 'lab-n1',
  measurements: [{ id: 'crr-pod', kind: 'rr', path: 'pod-to-pod', mode: 'crr', tool: 'tcp-rr' }],
  conditions: { hubble: {} },
};

/** Each node's Hubble as its cilium-agent and observer say it, read from the test (not through the collector). */
async function hubbleOnNodes(cilium: CiliumLab): Promise<string[]> {
  return Promise.all(
    cilium.ciliumAgents.map(async (a) => {
      const f = await readCiliumFeatures(a.socket);
      const serving = await hubbleServerStatus(hubbleSocket(a.socket), 3000).then(
        () => 'serving',
        () => 'no socket',
      );
      return `${a.nodeName}: ${f.hubble}, ${serving}`;
    }),
  );
}

/** The collector process with the cilium-config opt-in; healthy within 180 s (a start-up restore rolls Cilium first). */
function startCollector(lab: Lab, kubeconfig: string, sweepNamespace: string) {
  return startLabKubernetesCollector(
    { kubeconfig, namespace: NS, sweepNamespace },
    lab,
    {
      CNI_BENCH_CILIUM_NAMESPACE: 'kube-system',
      CNI_BENCH_ALLOW_CILIUM_CONFIG_CHANGE: 'true',
      CNI_BENCH_LIVENESS_TIMEOUT_MS: '60000',
    },
    180_000,
  );
}

test('cluster Hubble through the collector process: on (every node Ok, flows counted), measured, off again, off after SIGTERM, restored after SIGKILL', {
  skip: notLong,
  timeout: 1_800_000,
}, async (t) => {
  const lab = await Lab.create({ nodes: 2, log, proxy: { mode: 'cilium' }, shareCpus: true });
  const cilium = lab.services as unknown as CiliumLab;
  const id = lab.plan.id;
  let collector: Proc | undefined;
  try {
    const cp = cilium.controlPlane as unknown as ControlPlane;
    const core = kubeConfigFrom(cp.adminKubeconfig).makeApiClient(CoreV1Api);
    const ciliumConfig = async () => core.readNamespacedConfigMap({ name: 'cilium-config', namespace: 'kube-system' });
    const before = (await ciliumConfig()).data?.['enable-hubble'];
    const { kubeconfig, sweepNamespace } = await chartCollectorIdentity(cp, 'cni-bench-agent', NS, [
      'rbac.ciliumConfig.write=true',
    ]);
    const off = ['lab-n0: Disabled, no socket', 'lab-n1: Disabled, no socket'];
    assert.deepEqual(await hubbleOnNodes(cilium), off, 'Hubble off before the run');

    const first = await startCollector(lab, kubeconfig, sweepNamespace);
    collector = first.proc;
    const url = first.url;
    lab.startAgents(`unix:${lab.controlSocket}`);
    const agentsUp = (u: string) => agentsConnected(u, lab.agentCount, 90_000);
    await agentsUp(url);

    // Hubble applied, verified through the agents, measured beside its baseline, reverted and verified off.
    const began = Date.now();
    const runId = await postRun(url, { ...BASE, name: 'cluster hubble' });
    const run = await runEnded(url, runId, 900_000);
    const { steps, rows } = await conditionsReport(url, runId, (line) => t.diagnostic(line));
    t.diagnostic(`run ${Date.now() - began} ms`);
    assert.equal(run.state, 'succeeded', `${run.reason}\n${first.proc.output().slice(-4000)}`);
    const apply = steps.find((s) => s.group === 'hubble' && s.action === 'apply');
    assert.equal(apply?.status, 'succeeded', apply?.how);
    assert.match(apply?.how ?? '', /^Hubble on in every agent's node \(.*: Ok.*daemonset\/cilium rolled in \d+ ms/);
    const counted =
      /counted (\d+) new flows and GetFlows, read after each client's burst, returned (\d+) flows to \S+ from \S+/.exec(
        apply?.how ?? '',
      );
    assert.ok(counted && Number(counted[1]) > 0 && Number(counted[2]) > 0, apply?.how);
    const revert = steps.find((s) => s.group === 'hubble' && s.action === 'revert');
    assert.equal(revert?.status, 'succeeded', revert?.how);
    assert.match(revert?.how ?? '', /reads Hubble Disabled .* and no observer answers/);
    const row = rows.find((r) => r.group === 'hubble');
    assert.ok(row && (row.baseline ?? 0) > 0 && (row.value ?? 0) > 0 && row.verdict, JSON.stringify(row));
    assert.deepEqual(await hubbleOnNodes(cilium), off, 'Hubble off after the run');
    const after = await ciliumConfig();
    assert.equal(after.data?.['enable-hubble'], before, 'enable-hubble as it was');
    assert.equal(after.metadata?.annotations?.[HUBBLE_BEFORE_ANNOTATION], undefined, 'no mark left');

    // SIGTERM while Hubble is on: the collector turns it off again before it exits.
    const second = await postRun(url, { ...BASE, durationSeconds: 20, rounds: 1, name: 'cluster hubble, SIGTERM' });
    await untilApplied(url, second, 'Hubble on');
    const onNow = await hubbleOnNodes(cilium);
    assert.deepEqual(onNow, ['lab-n0: Ok, serving', 'lab-n1: Ok, serving'], 'Hubble on when SIGTERM comes');
    const termAt = Date.now();
    first.proc.child.kill('SIGTERM');
    const code = await first.proc.exited;
    t.diagnostic(`collector exited with ${code} ${Date.now() - termAt} ms after SIGTERM with Hubble on`);
    collector = undefined;
    assert.deepEqual(await hubbleOnNodes(cilium), off, `Hubble off after SIGTERM\n${first.proc.output().slice(-3000)}`);
    assert.equal((await ciliumConfig()).data?.['enable-hubble'], before);
    assert.doesNotMatch(first.proc.output(), /condition revert failed/, 'the revert was verified');

    // SIGKILL while Hubble is on: nothing can revert then, but cilium-config carries the value before, and the next
    // collector with the opt-in puts it back (and rolls Cilium) when it starts.
    const third = await startCollector(lab, kubeconfig, sweepNamespace);
    collector = third.proc;
    await agentsUp(third.url);
    const killed = await postRun(third.url, {
      ...BASE,
      durationSeconds: 20,
      rounds: 1,
      name: 'cluster hubble, SIGKILL',
    });
    await untilApplied(third.url, killed, 'Hubble on');
    third.proc.child.kill('SIGKILL');
    await third.proc.exited;
    collector = undefined;
    assert.deepEqual(await hubbleOnNodes(cilium), ['lab-n0: Ok, serving', 'lab-n1: Ok, serving'], 'left on by SIGKILL');
    assert.equal((await ciliumConfig()).metadata?.annotations?.[HUBBLE_BEFORE_ANNOTATION], before ?? '');
    const restartAt = Date.now();
    const fourth = await startCollector(lab, kubeconfig, sweepNamespace);
    collector = fourth.proc;
    t.diagnostic(`the next collector restored Hubble off and was up ${Date.now() - restartAt} ms after its start`);
    assert.match(fourth.proc.output(), /restored cilium-config enable-hubble an earlier collector left changed/);
    assert.deepEqual(await hubbleOnNodes(cilium), off, 'Hubble off again after the next collector started');
    const restored = await ciliumConfig();
    assert.equal(restored.data?.['enable-hubble'], before);
    assert.equal(restored.metadata?.annotations?.[HUBBLE_BEFORE_ANNOTATION], undefined, 'no mark left');
  } finally {
    if (collector) await stop(collector).catch(() => undefined);
    await lab.destroy();
  }
  assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
});
