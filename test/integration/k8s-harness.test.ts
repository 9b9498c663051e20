/**
 * The control-plane harness itself: a real etcd + kube-apiserver (RBAC on),
 * kube-controller-manager, kube-scheduler and kwok come up, fake nodes turn
 * Ready, a DaemonSet gets a running pod on each of them, an unbound user is
 * refused, and stop() (or the death of the owning process) leaves nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { kubeConfigFrom } from '../support/harness/apply.js';
import { type ControlPlane, HARNESS_POD_CIDR, startControlPlane } from '../support/harness/control-plane.js';
import { addKwokNodes } from '../support/harness/kwok-nodes.js';
import { removeLeftoverHarnesses } from '../support/harness/leftovers.js';
import { waitFor } from '../support/helpers/procs.js';
import { startOwner } from '../support/helpers/sigkilled-owner.js';

let cp: ControlPlane;

before(async () => {
  cp = await startControlPlane({ controllers: true, kwok: true });
  process.stdout.write(`# harness: control plane ready in ${(cp.startMs / 1000).toFixed(1)} s\n`);
});

after(async () => {
  await cp?.stop();
});

test('the apiserver is real: its version, and RBAC refuses a user with no bindings', async () => {
  const version = (await cp.get('/version')) as { gitVersion: string };
  assert.match(version.gitVersion, /^v1\.\d+\.\d+/);
  const nobody = kubeConfigFrom(cp.kubeconfigFor('nobody')).makeApiClient(CoreV1Api);
  await assert.rejects(
    nobody.listNamespacedSecret({ namespace: 'kube-system' }),
    (err: { code?: number }) => err.code === 403,
  );
});

test('kwok nodes turn Ready and a DaemonSet runs a pod on every one, with an IP from the harness range', async () => {
  const nodes = await addKwokNodes(cp.adminKubeconfig, 3);
  const kc = kubeConfigFrom(cp.adminKubeconfig);
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  await apps.createNamespacedDaemonSet({
    namespace: 'default',
    body: {
      metadata: { name: 'probe' },
      spec: {
        selector: { matchLabels: { app: 'probe' } },
        template: {
          metadata: { labels: { app: 'probe' } },
          spec: { tolerations: [{ operator: 'Exists' }], containers: [{ name: 'c', image: 'example.invalid/none:1' }] },
        },
      },
    },
  });
  const pods = await waitFor(
    'a running DaemonSet pod on every kwok node',
    async () => {
      const list = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=probe' });
      const running = list.items.filter((p) => p.status?.phase === 'Running' && p.status.podIP);
      return running.length === nodes.length ? running : undefined;
    },
    60_000,
    500,
  );
  assert.deepEqual(pods.map((p) => p.spec?.nodeName).sort(), [...nodes].sort());
  const prefix = HARNESS_POD_CIDR.split('.').slice(0, 2).join('.');
  for (const p of pods)
    assert.ok(p.status?.podIP?.startsWith(`${prefix}.`), `pod IP ${p.status?.podIP} outside ${HARNESS_POD_CIDR}`);
});

test('a harness whose owner was SIGKILLed is removed by the next start', async () => {
  // A child process starts a bare harness (etcd + apiserver), reports its directory, and is killed.
  const owner = await startOwner(
    new URL('../support/harness/control-plane.js', import.meta.url),
    'm.startControlPlane({}).then((cp) => cp.dir)',
    'the child harness',
    90_000,
  );
  const dir = owner.name;
  const pids = readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    });
  assert.ok(pids.length >= 2, `expected etcd and kube-apiserver of ${dir} running, found ${pids.length}`);
  await owner.kill();
  assert.ok(existsSync(dir), 'a SIGKILLed owner cannot clean up; the directory is still there');
  assert.ok(removeLeftoverHarnesses() >= 1);
  assert.equal(existsSync(dir), false);
  await waitFor('the orphaned components to die', () => pids.every(dead) || undefined, 10_000, 100);
});

/** Gone or a zombie (pid 1 of a container may not reap). */
function dead(pid: string): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}
