/**
 * The cluster's dataplane-restart (collector/kubernetes/dataplane-restart.ts):
 * which pod it picks and refuses to pick, what "ready" means, and the order of
 * its calls against a scripted API (list, delete with the uid as precondition,
 * list until a new pod is Ready); a 403 from the authorizer fails before
 * anything was deleted, naming the verb. The real apiserver, authorizer and
 * kube-proxy are in test/integration/k8s-lab-dataplane-restart.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import {
  DATAPLANE_RESTART_REFUSAL,
  DataplaneRestarter,
  pickDataplanePod,
  podReady,
} from '../../../../collector/kubernetes/dataplane-restart.js';
import { DEFAULT_PACER, Pacer } from '../../../../collector/kubernetes/pacer.js';
import { disruptionRefusal } from '../../../../collector/runs/disruption-events.js';
import { ErrorCodes, isCniBenchError } from '../../../../core/errors.js';
import { createLogger } from '../../../../core/log.js';
import type { ServiceFrontend } from '../../../../core/service-frontend.js';

const log = createLogger({ test: 'dataplane-restart' }, 'error');

function pod(
  name: string,
  node: string,
  o: { uid?: string; ready?: boolean; owner?: string; deleting?: boolean } = {},
): V1Pod {
  return {
    metadata: {
      name,
      uid: o.uid ?? `uid-${name}`,
      ...(o.owner === ''
        ? {}
        : {
            ownerReferences: [{ apiVersion: 'apps/v1', kind: o.owner ?? 'DaemonSet', name: 'kube-proxy', uid: 'ds' }],
          }),
      ...(o.deleting ? { deletionTimestamp: new Date() } : {}),
    },
    spec: { nodeName: node, containers: [] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}

test('picks the one DaemonSet pod on the node; refuses none, a mirror pod, or two, naming them', () => {
  const pods = [pod('kube-proxy-a', 'n1'), pod('kube-proxy-b', 'n2'), pod('kube-proxy-old', 'n1', { deleting: true })];
  assert.equal(pickDataplanePod(pods, 'n1', 'sel')?.metadata?.name, 'kube-proxy-a');
  assert.throws(
    () => pickDataplanePod(pods, 'n3', "'sel' in kube-system"),
    /no pod matching 'sel' in kube-system on node 'n3'/,
  );
  assert.throws(
    () => pickDataplanePod([pod('kube-proxy-n1', 'n1', { owner: 'Node' })], 'n1', 'sel'),
    /kube-proxy-n1 on node 'n1' is not a DaemonSet's pod \(a static pod's mirror/,
  );
  assert.throws(
    () => pickDataplanePod([pod('kube-proxy-a', 'n1'), pod('cilium-x', 'n1')], 'n1', 'sel'),
    /2 dataplane pods on node 'n1' \(kube-proxy-a, cilium-x\).*--dataplane-selector/,
  );
});

test('ready means Running with the Ready condition True', () => {
  assert.equal(podReady(pod('a', 'n1')), true);
  assert.equal(podReady(pod('a', 'n1', { ready: false })), false);
  assert.equal(
    podReady({ ...pod('a', 'n1'), status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'True' }] } }),
    false,
  );
});

/** A scripted CoreV1Api: list answers from `lists` in turn (the last one repeats); delete is recorded. */
function scripted(lists: (V1Pod[] | Error)[], deleteError?: Error) {
  const calls: string[] = [];
  let i = 0;
  const api = {
    listNamespacedPod: async (r: { namespace: string; labelSelector: string; fieldSelector: string }) => {
      calls.push(`list ${r.namespace} ${r.labelSelector} ${r.fieldSelector}`);
      const next = lists[Math.min(i++, lists.length - 1)] as V1Pod[] | Error;
      if (next instanceof Error) throw next;
      return { items: next };
    },
    deleteNamespacedPod: async (r: { name: string; namespace: string; body: { preconditions: { uid: string } } }) => {
      calls.push(`delete ${r.namespace}/${r.name} uid=${r.body.preconditions.uid}`);
      if (deleteError) throw deleteError;
      return {};
    },
  } as unknown as CoreV1Api;
  const restarter = new DataplaneRestarter(api, new Pacer({ ...DEFAULT_PACER, maxRetries: 0 }), {
    namespace: 'kube-system',
    selector: 'k8s-app=kube-proxy',
    log,
    pollMs: 1,
    readyTimeoutMs: 2000,
  });
  return { restarter, calls };
}

const forbidden = (verb: string) =>
  Object.assign(new Error('HTTP-Code: 403'), {
    code: 403,
    body: JSON.stringify({
      message: `pods is forbidden: User "system:serviceaccount:cni-bench:cni-bench-collector" cannot ${verb} resource "pods" in API group "" in the namespace "kube-system"`,
    }),
  });

test('restart: list, delete by uid, then list until a new pod is Ready; the times are in order', async () => {
  const old = pod('kube-proxy-a', 'n1', { uid: 'u1' });
  const { restarter, calls } = scripted([
    [old],
    [{ ...old, metadata: { ...old.metadata, deletionTimestamp: new Date() } }],
    [pod('kube-proxy-b', 'n1', { uid: 'u2', ready: false })],
    [pod('kube-proxy-b', 'n1', { uid: 'u2' })],
  ]);
  const did = await restarter.restart('n1');
  assert.deepEqual(calls, [
    'list kube-system k8s-app=kube-proxy spec.nodeName=n1',
    'delete kube-system/kube-proxy-a uid=u1',
    ...Array(3).fill('list kube-system k8s-app=kube-proxy spec.nodeName=n1'),
  ]);
  assert.equal(did.restarted, 'kube-system/kube-proxy-a on n1, now kube-proxy-b');
  const [deleted, gone, ready] = [did.deletedMs, did.oldGoneMs, did.readyMs] as number[];
  assert.ok(deleted !== undefined && gone !== undefined && ready !== undefined);
  assert.ok(deleted <= (gone as number) && (gone as number) <= (ready as number), JSON.stringify(did));
});

test('the authorizer refusing list or delete fails the event naming the verb; nothing is deleted', async () => {
  const noList = scripted([forbidden('list')]);
  await assert.rejects(
    noList.restarter.restart('n1'),
    (e: Error) =>
      isCniBenchError(e, ErrorCodes.FORBIDDEN) &&
      /the authorizer refused list pods in namespace kube-system; nothing was deleted/.test(e.message) &&
      /cannot list resource "pods"/.test(e.message),
  );
  assert.ok(!noList.calls.some((c) => c.startsWith('delete')));
  const noDelete = scripted([[pod('kube-proxy-a', 'n1')]], forbidden('delete'));
  await assert.rejects(
    noDelete.restarter.restart('n1'),
    /refused delete pods in namespace kube-system; nothing was deleted/,
  );
  assert.equal(noDelete.calls.length, 2);
});

test('no new pod Ready in time: a timeout naming the pod deleted and the node', async () => {
  const { restarter } = scripted([[pod('kube-proxy-a', 'n1')], []]);
  await assert.rejects(
    restarter.restart('n1'),
    /kube-system\/kube-proxy-a deleted, but no new pod .* on node 'n1' within 2 s/,
  );
});

test('without the opt-in the event is refused before the run, naming the chart value and the flag', () => {
  const cluster: ServiceFrontend = {
    description: 'Kubernetes Services and EndpointSlices',
    dataplaneRestartRefusal: DATAPLANE_RESTART_REFUSAL,
    expose: async () => ({ ip: '198.19.0.1', port: 1 }),
    remove: async () => undefined,
  };
  const plan = { server: { info: { nodeName: 'n0' } } } as Parameters<typeof disruptionRefusal>[2];
  const why = disruptionRefusal('dataplane-restart', cluster, plan) ?? '';
  assert.match(why, /rbac\.dataplaneRestart\.enabled=true/);
  assert.match(why, /--allow-dataplane-restart/);
  assert.equal(
    disruptionRefusal('dataplane-restart', { ...cluster, restartDataplane: async () => ({}) }, plan),
    undefined,
  );
});
