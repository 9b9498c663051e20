/**
 * The LB-map raise as a cluster does it: the real collector process
 * (dist/collector/main.js) in Kubernetes mode, as the chart's collector
 * ServiceAccount with `rbac.ciliumConfig.write=true`, against a 2-node
 * `cilium` lab whose cilium-config sets bpf-lb-map-max to 256 (what each
 * node's loaded cilium_lb4_services_v2 holds, read with bpftool). Without the
 * opt-in the sweep is refused with the exact command. With
 * CNI_BENCH_ALLOW_CILIUM_CONFIG_CHANGE=true the collector patches
 * cilium-config and rollout-restarts daemonset/cilium through the API; the lab
 * stands in for the DaemonSet controller (lab/cilium/rollout.ts: its agents
 * restarted, the status written once they carry Service traffic), and the
 * collector waits for the rollout and for every node's loaded map at the new
 * size, measures, and reverts the same way. Long (two rollouts): runs with
 * CNI_BENCH_LONG_TESTS=1.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { createLogger } from '../../core/log.js';
import type { Lab } from '../../lab/lab.js';
import { kubeConfigFrom } from '../support/harness/apply.js';
import { startLabKubernetesCollector } from '../support/harness/collector-process.js';
import type { ControlPlane } from '../support/harness/control-plane.js';
import { lbMapSweep, loadedMax, smallLbMapLab, watchLoadedMax } from '../support/helpers/cilium-lb-map.js';
import { ciliumLeftovers, NOTHING_LEFT } from '../support/helpers/cilium-state.js';
import { chartCollectorIdentity } from '../support/helpers/collector-identity.js';
import { type Proc, stop } from '../support/helpers/procs.js';
import { agentsConnected, postRun, runEnded } from '../support/helpers/rest-runs.js';
import { notLong } from '../support/helpers/root.js';

const NS = 'cni-bench';
const SMALL = 256;
const log = createLogger({ test: 'lab-cilium-preflight-process' }, 'warn');

const SWEEP = lbMapSweep('preflight sweep through the collector process');

const FIX = `kubectl -n kube-system patch configmap cilium-config --type merge -p '{"data":{"bpf-lb-map-max":"65536"}}' && kubectl -n kube-system rollout restart daemonset/cilium && kubectl -n kube-system rollout status daemonset/cilium`;

/** The collector process as the chart's ServiceAccount, allowed to change cilium-config or not. */
function startCollector(lab: Lab, kubeconfig: string, sweepNamespace: string, allow: boolean) {
  return startLabKubernetesCollector({ kubeconfig, namespace: NS, sweepNamespace }, lab, {
    CNI_BENCH_CILIUM_NAMESPACE: 'kube-system',
    CNI_BENCH_ALLOW_CILIUM_CONFIG_CHANGE: String(allow),
  });
}

async function sweep(url: string, proc: Proc): Promise<{ state: string; reason: string }> {
  const id = await postRun(url, SWEEP);
  return runEnded(url, id, 800_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${proc.output().slice(-4000)}`);
  });
}

test('the collector process raises bpf-lb-map-max through a rollout only with the opt-in, and refuses with the exact command without it', {
  skip: notLong,
  timeout: 1_500_000,
}, async (t) => {
  const { lab, cilium } = await smallLbMapLab(log, SMALL);
  const id = lab.plan.id;
  let collector: Proc | undefined;
  try {
    const cp = cilium.controlPlane as unknown as ControlPlane;
    const { kubeconfig, sweepNamespace } = await chartCollectorIdentity(cp, 'cni-bench-agent', NS, [
      'rbac.ciliumConfig.write=true',
    ]);
    assert.deepEqual(await loadedMax(cilium), [SMALL, SMALL]);

    // Without the opt-in: refused before any step, the exact command in the run's reason and the collector's log.
    const first = await startCollector(lab, kubeconfig, sweepNamespace, false);
    collector = first.proc;
    lab.startAgents(`unix:${lab.controlSocket}`);
    const agentsUp = (url: string) => agentsConnected(url, lab.agentCount, 90_000);
    await agentsUp(first.url);
    const refused = await sweep(first.url, first.proc);
    assert.equal(refused.state, 'failed');
    assert.match(refused.reason, /serviceScale\.steps: 100 Services .* the loaded map holds 256 \(loaded maps on /);
    assert.ok(refused.reason.includes(`Run: ${FIX}`), refused.reason);
    // Its log lines are JSON: the command's quotes come escaped.
    assert.ok(first.proc.output().includes(JSON.stringify(FIX).slice(1, -1)), 'the collector logged the command');
    assert.deepEqual(await loadedMax(cilium), [SMALL, SMALL], 'nothing changed');
    await stop(first.proc);

    // With the opt-in: the same sweep raises the map through the API, and the lab's agents restart as a rollout.
    const second = await startCollector(lab, kubeconfig, sweepNamespace, true);
    collector = second.proc;
    await agentsUp(second.url);
    const watch = watchLoadedMax(cilium);
    const seen = watch.seen;
    const began = Date.now();
    const raised = await sweep(second.url, second.proc);
    await watch.stop();
    assert.equal(raised.state, 'succeeded', `${raised.reason}\n${second.proc.output().slice(-4000)}`);
    for (const n of ['n0', 'n1']) assert.ok(seen.has(`${n}:65536`), `${n}'s loaded map read 65536: ${[...seen]}`);
    const out = second.proc.output();
    assert.match(out, /cilium LB map raised and loaded on every node/);
    assert.match(out, /cilium LB map reverted and verified on every node/);
    // Reverted: cilium-config as it was, every node's loaded map at 256 again.
    const cm = await kubeConfigFrom(cp.adminKubeconfig)
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'cilium-config', namespace: 'kube-system' });
    assert.equal(cm.data?.['bpf-lb-map-max'], String(SMALL));
    assert.deepEqual(await loadedMax(cilium), [SMALL, SMALL]);
    const raisedMs = /"msg":"cilium LB map raised and loaded on every node"[^\n]*"raisedMs":(\d+)/.exec(out)?.[1];
    const revertMs = /"msg":"cilium LB map reverted and verified on every node"[^\n]*"verifiedMs":(\d+)/.exec(out)?.[1];
    t.diagnostic(
      `refused with the command; with the opt-in raised in ${raisedMs} ms, reverted in ${revertMs} ms, run ${Date.now() - began} ms; seen ${[...seen].sort().join(' ')}`,
    );
  } finally {
    await stop(collector).catch(() => undefined);
    await lab.destroy();
  }
  assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
});
