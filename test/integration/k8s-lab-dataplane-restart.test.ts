/**
 * A disruption phase's dataplane-restart through the collector on a cluster,
 * with real parts: the collector (in process, REST) with its Kubernetes
 * frontend acting as the Helm chart's collector ServiceAccount against the
 * harness apiserver, whose real authorizer answers; a 2-node lab the lab does
 * not program (proxy mode 'external') with the real kube-proxy v1.37
 * (iptables) in each node; the harness playing kubelet and DaemonSet
 * controller for those processes (support/harness/kube-proxy-pods.ts: a
 * kube-proxy Pod per node in kube-system, and a deleted one restarts its
 * node's real kube-proxy and comes back Ready under a new name).
 * Shown, in one collector:
 * - without the opt-in, the scenario is refused before the run, naming the
 *   chart value and the flag;
 * - with the opt-in but the chart's default RBAC, the authorizer's 403 is the
 *   phase's failure, naming the verb and resource, and no pod was deleted;
 *   with list granted but not delete, the same for delete;
 * - with the grant (the chart rendered with rbac.dataplaneRestart.enabled=true),
 *   the collector deletes the client node's kube-proxy pod, its real process
 *   restarts, the new pod is Ready, and the report's timeline shows the event
 *   with a summary that agrees with its bins.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AppsV1Api, CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import type { Collector } from '../../collector/index.js';
import { allowDataplaneRestart, DEFAULT_DATAPLANE_SELECTOR } from '../../collector/kubernetes/dataplane-restart.js';
import { createLogger } from '../../core/log.js';
import { Lab } from '../../lab/lab.js';
import { createAll, kubeConfigFrom, renderChart } from '../support/harness/apply.js';
import {
  COLLECTOR_NAMESPACE,
  COLLECTOR_RELEASE,
  collectorCluster,
  startKubeProxies,
  startLabCollector,
} from '../support/harness/collector-cluster.js';
import type { RealKubeProxy } from '../support/harness/kube-proxy.js';
import { KubeProxyPods } from '../support/harness/kube-proxy-pods.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { getJson } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const RATE = 100;
const SECONDS = 8;
const log = createLogger({ test: 'k8s-lab-dataplane-restart' }, 'warn');
const tmp = mkdtempSync(join(tmpdir(), 'cnib-dp-restart-'));
const k8s = collectorCluster(notRoot);
after(() => rmSync(tmp, { recursive: true, force: true }));

const SCENARIO = {
  serverNode: 'lab-n0',
  clientNode: 'lab-n1',
  sampleIntervalMs: 0,
  measurements: [
    { kind: 'disruption', event: 'dataplane-restart', durationSeconds: SECONDS, eventAtSeconds: 3, rate: RATE },
  ],
};

interface Bin {
  attempts: number;
  errors: Record<string, number>;
}
interface KindSummary {
  kind: 'new' | 'kept';
  attemptsAfter: number;
  errorsAfter: number;
  firstErrorMs: number | null;
  recoveredAfterMs: number;
}
interface Entry {
  name: string;
  event: { event: string; firedMs: number; doneMs: number; did: Record<string, unknown>; error?: string };
  timeline: { startMs: number; binMs: number; bins: { new: Bin; kept: Bin }[] };
  summary: { eventAtMs: number; kinds: KindSummary[] };
}

async function post(c: Collector, name: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return getJson(`${c.httpUrl}/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, ...SCENARIO }),
  });
}

async function runToEnd(
  c: Collector,
  name: string,
): Promise<{ run: Record<string, unknown>; report: Record<string, unknown>; markdown: string }> {
  const created = await post(c, name);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  await c.orchestrator.wait(id);
  const run = (await getJson(`${c.httpUrl}/v1/runs/${id}`)).body;
  const report = (await getJson(`${c.httpUrl}/v1/runs/${id}/report?format=json`)).body;
  const md = await fetch(`${c.httpUrl}/v1/runs/${id}/report?format=md`);
  return { run, report, markdown: await md.text() };
}

test('dataplane-restart on a cluster: refused without the opt-in, the 403 without the grant (list, then delete), the real kube-proxy pod restarted with it', {
  skip: notRoot,
  timeout: 600_000,
}, async (t) => {
  const lab = await Lab.create({ nodes: 2, log, proxy: { mode: 'external' } });
  const proxies: RealKubeProxy[] = [];
  let pods: KubeProxyPods | undefined;
  let collector: Collector | undefined;
  try {
    await startKubeProxies(k8s.cp, lab.plan.nodes, 'iptables', proxies);
    const core = k8s.admin.makeApiClient(CoreV1Api);
    pods = new KubeProxyPods(
      core,
      k8s.admin.makeApiClient(AppsV1Api),
      new Map(lab.plan.nodes.map((n, i) => [n.name, proxies[i] as RealKubeProxy])),
    );
    await pods.start();
    const frontend = k8s.frontend(log);
    await frontend.init();
    collector = await startLabCollector(lab, frontend, join(tmp, 'runs.db'), log);
    const c = collector;
    const clientNode = 'lab-n1';
    const before = await pods.current(clientNode);
    assert.ok(before?.metadata?.uid, 'the client node has its kube-proxy pod');

    // 1. No opt-in: refused before the run, naming the chart value and the flag.
    const refused = await post(c, 'no opt-in');
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    const why = JSON.stringify(refused.body);
    assert.match(why, /measurements\[0\]\.event/);
    assert.match(why, /rbac\.dataplaneRestart\.enabled=true/);
    assert.match(why, /--allow-dataplane-restart/);

    // 2. The opt-in in the collector, but the chart's default RBAC: the authorizer refuses; nothing is deleted.
    allowDataplaneRestart(frontend, kubeConfigFrom(k8s.kubeconfig), {
      namespace: 'kube-system',
      selector: DEFAULT_DATAPLANE_SELECTOR,
      log,
    });
    const denied = await runToEnd(c, 'opt-in without the grant');
    assert.equal(denied.run.state, 'failed', JSON.stringify(denied.run));
    const deniedEntry = (denied.report.disruptions as Entry[] | undefined)?.[0];
    // The phase's failure, as the run shows it, and the event's own record in the report.
    const phaseError = (denied.run.phases as { error: string }[]).map((p) => p.error).join(' ');
    assert.match(
      phaseError,
      /event dataplane-restart failed: .*the authorizer refused list pods in namespace kube-system; nothing was deleted/,
    );
    assert.match(phaseError, /cannot list resource \\?"pods\\?"/);
    assert.match(deniedEntry?.event.error ?? '', /refused list pods in namespace kube-system/);
    assert.equal((await pods.current(clientNode))?.metadata?.uid, before.metadata.uid, 'the pod is untouched');
    assert.equal(pods.events.length, 0, 'no kube-proxy restarted');
    t.diagnostic(`without the grant: ${deniedEntry?.event.error}`);

    // 2b. Half a grant (list only): the pod is found, the delete refused, nothing half-done.
    const rbac = k8s.admin.makeApiClient(RbacAuthorizationV1Api);
    const partial = 'test-dataplane-list-only';
    await rbac.createNamespacedRole({
      namespace: 'kube-system',
      body: {
        metadata: { name: partial },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'kube-system',
      body: {
        metadata: { name: partial },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: partial },
        subjects: [{ kind: 'ServiceAccount', name: 'cni-bench-collector', namespace: COLLECTOR_NAMESPACE }],
      },
    });
    const half = await runToEnd(c, 'list without delete');
    const halfError = (half.run.phases as { error: string }[]).map((p) => p.error).join(' ');
    assert.match(halfError, /the authorizer refused delete pods in namespace kube-system; nothing was deleted/);
    assert.match(halfError, /cannot delete resource "pods"/);
    assert.equal((await pods.current(clientNode))?.metadata?.uid, before.metadata.uid, 'the pod is untouched');
    assert.equal(pods.events.length, 0, 'no kube-proxy restarted');
    await rbac.deleteNamespacedRoleBinding({ name: partial, namespace: 'kube-system' });
    await rbac.deleteNamespacedRole({ name: partial, namespace: 'kube-system' });

    // 3. The grant, as the chart renders it with the opt-in: the real restart.
    const granted = renderChart(COLLECTOR_RELEASE, COLLECTOR_NAMESPACE, ['rbac.dataplaneRestart.enabled=true']).filter(
      (o) => (o.kind === 'Role' || o.kind === 'RoleBinding') && /dataplane-restart/.test(o.metadata?.name ?? ''),
    );
    assert.equal(granted.length, 2, 'one Role and its binding');
    await createAll(k8s.admin, granted);
    const done = await runToEnd(c, 'kube-proxy restarted by the collector');
    assert.equal(done.run.state, 'succeeded', `${done.run.reason}\n${JSON.stringify(done.run.phases, null, 1)}`);
    assert.deepEqual(pods.errors, [], 'the harness kubelet');
    assert.equal(pods.events.length, 1, JSON.stringify(pods.events));
    const ev = pods.events[0];
    assert.equal(ev?.node, clientNode);
    assert.equal(ev?.deleted, before.metadata.name);
    const after = await pods.current(clientNode);
    assert.equal(after?.metadata?.name, ev?.created);
    assert.notEqual(after?.metadata?.uid, before.metadata.uid);
    assert.equal((proxies[1] as RealKubeProxy).exitCode(), undefined, 'kube-proxy runs again');
    // The server node's pod was not touched.
    assert.equal((await pods.current('lab-n0'))?.metadata?.deletionTimestamp, undefined);

    const entry = (done.report.disruptions as Entry[])[0] as Entry;
    const did = entry.event.did;
    assert.match(
      String(did.restarted),
      new RegExp(`kube-system/${before.metadata.name} on ${clientNode}, now ${ev?.created}`),
    );
    const [deletedMs, readyMs] = [did.deletedMs, did.readyMs] as number[];
    assert.ok(
      typeof deletedMs === 'number' && typeof readyMs === 'number' && deletedMs <= readyMs,
      JSON.stringify(did),
    );
    assert.ok(readyMs <= entry.event.doneMs - entry.event.firedMs, 'ready within what the event took');
    // The harness saw the deletion after the collector fired, and had restarted kube-proxy before the collector was done.
    assert.ok((ev?.seenMs ?? 0) >= entry.event.firedMs && (ev?.restartedMs ?? Infinity) <= entry.event.doneMs);
    t.diagnostic(
      `collector: deleted at +${deletedMs} ms, old pod gone +${did.oldGoneMs} ms, new pod Ready +${readyMs} ms; harness: kube-proxy restarted ${(ev?.restartedMs ?? 0) - (ev?.seenMs ?? 0)} ms after it saw the deletion`,
    );

    // The timeline shows the event, and the summary agrees with its bins.
    const { timeline: tl, summary: s } = entry;
    assert.equal(s.eventAtMs, entry.event.firedMs - tl.startMs);
    const first = Math.floor(s.eventAtMs / tl.binMs);
    assert.ok(first >= 10 && first < tl.bins.length - 10, `event in bin ${first} of ${tl.bins.length}`);
    const total = tl.bins.reduce((a, b) => a + b.new.attempts, 0);
    assert.ok(total >= RATE * SECONDS * 0.95, `${total} new-connection attempts of ${RATE * SECONDS}`);
    const errorsOf = (b: Bin): number => Object.values(b.errors).reduce((a, v) => a + v, 0);
    for (const k of s.kinds) {
      const bins = tl.bins.slice(first).map((b) => b[k.kind]);
      const errors = bins.reduce((a, b) => a + errorsOf(b), 0);
      assert.equal(k.errorsAfter, errors, `${k.kind}: errors after the event`);
      assert.equal(
        k.attemptsAfter,
        bins.reduce((a, b) => a + b.attempts, 0),
        `${k.kind}: attempts after`,
      );
      if (errors > 0)
        assert.ok(k.firstErrorMs !== null && k.recoveredAfterMs > 0, `${k.kind}: errors, not back at once`);
      assert.ok(k.recoveredAfterMs <= SECONDS * 1000 - s.eventAtMs + tl.binMs);
    }
    assert.match(done.markdown, /dataplane-restart: restarted kube-system\//);
    assert.match(done.markdown, /⚡ 0/);
    const lines = done.markdown.split('\n');
    const at = lines.findIndex((l) => l.includes('dataplane-restart: restarted'));
    t.diagnostic(lines.slice(Math.max(0, at - 2), at + 14).join('\n'));
  } finally {
    await collector?.close();
    await pods?.stop();
    for (const kp of proxies) await kp.stop().catch(() => undefined);
    await lab.destroy();
  }
  assert.deepEqual(labNamespaces(lab.plan.id), []);
});
