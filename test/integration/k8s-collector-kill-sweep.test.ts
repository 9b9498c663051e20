/**
 * The collector SIGKILLed in the middle of a real Service sweep, and restarted
 * on the same database: the collector binary (a process of its own, in
 * Kubernetes mode as the Helm chart's collector ServiceAccount) sweeps
 * selector-less Services and EndpointSlices through the harness apiserver;
 * the real kube-proxy v1.37 in iptables mode programs them in every lab node.
 * Once a step's Services exist in the apiserver and in the nodes' iptables,
 * the collector is SIGKILLed (no handler runs). Restarted with the same flags,
 * it marks the run interrupted, removes what the dead one left in the cluster
 * (so kube-proxy removes the rules), the agents come back and stop the dead
 * run's jobs, and nothing of the lab is left once it is torn down.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CoreV1Api, DiscoveryV1Api, type KubeConfig } from '@kubernetes/client-node';
import { ALL_MANAGED } from '../../collector/kubernetes/objects.js';
import { createLogger } from '../../core/log.js';
import { Lab } from '../../lab/lab.js';
import { installCollectorIdentity, kubeConfigFrom } from '../support/harness/apply.js';
import { type ControlPlane, startControlPlane } from '../support/harness/control-plane.js';
import { type RealKubeProxy, startKubeProxy } from '../support/harness/kube-proxy.js';
import { serviceCounts } from '../support/harness/kube-proxy-rules.js';
import { labNetnsProcesses } from '../support/helpers/cilium-state.js';
import { type CollectorMain, startCollectorMain } from '../support/helpers/collector-main.js';
import { labNamespaces, labStateFiles, rootLinks, rootRules } from '../support/helpers/host-state.js';
import { getJson, stop, waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const NS = 'cni-bench';
const RELEASE = 'cni-bench-agent';
// Small steps, long enough rounds that the kill lands inside the sweep.
const STEPS = [0, 200, 400];
const SCENARIO = {
  name: 'killed mid-sweep',
  durationSeconds: 2,
  warmupSeconds: 0.3,
  rounds: 3,
  roundSleepSeconds: 0.5,
  sampleIntervalMs: 0,
  serviceScale: { steps: STEPS, endpointsPerService: 2, syncTimeoutSeconds: 120 },
};
const TOOLS =
  /\biperf3 -[cs]\b|\bwrk\b|\bnetperf\b|\bnetserver\b|\bfortio\b|builtins\/(?:http-echo|tcp-echo|tcp-rr|http-open-loop)\.js/;
const log = createLogger({ test: 'k8s-collector-kill-sweep' }, 'warn');
const tmp = mkdtempSync(join(tmpdir(), 'cnib-kill-sweep-'));

let cp: ControlPlane;
let admin: KubeConfig;
let saKubeconfig: string;
let sweepNs: string;

before(async () => {
  if (notRoot) return;
  cp = await startControlPlane({});
  admin = kubeConfigFrom(cp.adminKubeconfig);
  ({ kubeconfig: saKubeconfig, sweepNamespace: sweepNs } = await installCollectorIdentity(cp, RELEASE, NS));
});

after(async () => {
  await cp?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

async function managedCount(namespace: string): Promise<{ services: number; slices: number }> {
  const services = await admin
    .makeApiClient(CoreV1Api)
    .listNamespacedService({ namespace, labelSelector: ALL_MANAGED });
  const slices = await admin
    .makeApiClient(DiscoveryV1Api)
    .listNamespacedEndpointSlice({ namespace, labelSelector: ALL_MANAGED });
  return { services: services.items.length, slices: slices.items.length };
}

test('the collector SIGKILLed mid-sweep and restarted on the same database: interrupted, the cluster cleaned, nothing left', {
  skip: notRoot,
  timeout: 900_000,
}, async (t) => {
  const links = rootLinks();
  const rules = rootRules();
  const lab = await Lab.create({ nodes: 2, log, proxy: { mode: 'external' } });
  const id = lab.plan.id;
  const proxies: RealKubeProxy[] = [];
  let collector: CollectorMain | undefined;
  try {
    for (const node of lab.plan.nodes) {
      proxies.push(
        await startKubeProxy(cp, { mode: 'iptables', netns: node.ns, nodeName: node.name, nodeIp: node.underlayIp }),
      );
    }
    const baseline = new Map<string, number>();
    for (const [i, node] of lab.plan.nodes.entries()) {
      const kp = proxies[i] as RealKubeProxy;
      const n = await waitFor(
        `kube-proxy in ${node.ns} to sync`,
        async () => {
          if (kp.exitCode() !== undefined) throw new Error(`kube-proxy exited with ${kp.exitCode()}:\n${kp.tail(30)}`);
          const c = (await serviceCounts(node.ns)).kubeServicesRules;
          return c > 0 ? { c } : undefined;
        },
        60_000,
        200,
      );
      baseline.set(node.ns, n.c);
    }
    const args = [
      '--grpc-listen',
      `unix:${lab.controlSocket}`,
      '--db',
      join(tmp, 'sweep.db'),
      '--kubernetes',
      'kubeconfig',
      '--kubeconfig',
      saKubeconfig,
      '--namespace',
      NS,
      '--sweep-namespace',
      sweepNs,
      '--heartbeat-interval-ms',
      '1000',
      '--liveness-timeout-ms',
      '30000',
    ];
    collector = await startCollectorMain(args);
    lab.startAgents(collector.grpc);
    const agentsConnected = async (c: CollectorMain): Promise<boolean> =>
      (await getJson(`${c.http}/v1/agents`)).body.agents.filter((a: { connected: boolean }) => a.connected).length ===
      lab.agentCount;
    const first = collector;
    await waitFor(`${lab.agentCount} agents`, () => agentsConnected(first), 60_000);
    const created = await getJson(`${first.http}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // Named nodes: the harness runs no kubelet, so its Nodes are never Ready and the collector would not choose them.
      body: JSON.stringify({
        ...SCENARIO,
        clientNode: lab.plan.nodes[0]!.name,
        serverNode: lab.plan.nodes[1]!.name,
      }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const runId = created.body.id as string;

    // The kill: once a step's Services are in the apiserver and kube-proxy has written (some of) them on a node.
    const client = lab.plan.nodes[0]!.ns;
    const atKill = await waitFor(
      'a sweep step in the apiserver and in the iptables of a node',
      async () => {
        const run = (await getJson(`${first.http}/v1/runs/${runId}`)).body;
        if (!['pending', 'running'].includes(run.state))
          throw new Error(`the run ended before the kill: ${run.state} ${run.reason}`);
        const managed = await managedCount(sweepNs);
        const rulesNow = (await serviceCounts(client)).kubeServicesRules;
        return managed.services >= 50 && rulesNow >= (baseline.get(client) ?? 0) + 50
          ? { managed, rules: rulesNow, state: run.state }
          : undefined;
      },
      300_000,
      200,
    );
    first.proc.child.kill('SIGKILL');
    await first.proc.exited;
    const toolsAtKill = labNetnsProcesses(id).filter((l) => TOOLS.test(l)).length;

    // Restarted with the same flags on the same database.
    const restartedAt = Date.now();
    collector = await startCollectorMain(args);
    const second = collector;
    const run = (await getJson(`${second.http}/v1/runs/${runId}`)).body;
    assert.equal(run.state, 'interrupted', JSON.stringify(run).slice(0, 500));
    assert.match(run.reason, /collector restarted/);
    // Before it listened, it removed what the dead collector had created, in both namespaces.
    assert.deepEqual(await managedCount(sweepNs), { services: 0, slices: 0 });
    assert.deepEqual(await managedCount(NS), { services: 0, slices: 0 });
    assert.match(second.proc.output(), /removed objects an earlier collector left behind/);
    // kube-proxy follows: every node's KUBE-SERVICES back to what it had before the run.
    for (const node of lab.plan.nodes)
      await waitFor(
        `kube-proxy to remove the sweep's rules in ${node.ns}`,
        async () => (await serviceCounts(node.ns)).kubeServicesRules === baseline.get(node.ns),
        120_000,
        250,
      );
    const rulesGoneMs = Date.now() - restartedAt;
    // The agents reconnect, learn the run is not live and stop its jobs: no load generator or server is left.
    await waitFor('agents back', () => agentsConnected(second), 60_000);
    await waitFor(
      'no tool left in the lab',
      async () => labNetnsProcesses(id).filter((l) => TOOLS.test(l)).length === 0,
      60_000,
      250,
    );
    // The interrupted run still has its report (what was committed before the kill).
    assert.equal((await getJson(`${second.http}/v1/runs/${runId}/report?format=json`)).status, 200);
    t.diagnostic(
      `killed at ${atKill.managed.services} sweep Services in the apiserver, ${atKill.rules} KUBE-SERVICES rules on ${client} (baseline ${baseline.get(client)}), ${toolsAtKill} tool process(es) running; after restart: run ${run.state}, objects removed, rules back to baseline ${rulesGoneMs} ms after the restart began`,
    );
  } finally {
    if (collector) await stop(collector.proc);
    for (const kp of proxies)
      await kp.stop().catch((err: Error) => log.error('kube-proxy stop failed', { error: err.message }));
    await lab.destroy();
  }
  assert.deepEqual(labNamespaces(id), []);
  assert.deepEqual(labStateFiles(undefined, id), []);
  assert.deepEqual(labNetnsProcesses(id), []);
  assert.equal(rootLinks(), links);
  assert.equal(rootRules(), rules);
});
