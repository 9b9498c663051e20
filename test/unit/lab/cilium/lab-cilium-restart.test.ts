/**
 * The objects behind a Cilium lab's restarts, pure: the canary Services the
 * lab connects through after each agent restart, and the cilium DaemonSet the
 * lab stands in for (its status while rolling and once rolled out, as
 * `kubectl rollout status` and the collector read it). Against real Cilium:
 * test/integration/lab-cilium-preflight*.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canaryObjects } from '../../../../lab/cilium/canary.js';
import { LAB_LABEL } from '../../../../lab/cilium/objects.js';
import { ciliumDaemonSet, daemonSetStatus } from '../../../../lab/cilium/rollout.js';

test('a canary is a selector-less Service with one ready endpoint on its port, labelled with the lab', () => {
  const o = canaryObjects('cni-bench-canary-n1', '198.18.17.11', 39_098, 'abcd1234');
  assert.equal(o.service.spec?.selector, undefined, 'selector-less: the lab owns its EndpointSlice');
  assert.deepEqual(o.service.spec?.ports, [{ name: 'p', port: 39_098, protocol: 'TCP', targetPort: 39_098 }]);
  assert.equal(o.slice.metadata?.labels?.['kubernetes.io/service-name'], 'cni-bench-canary-n1');
  assert.deepEqual(o.slice.endpoints, [
    { addresses: ['198.18.17.11'], conditions: { ready: true, serving: true, terminating: false } },
  ]);
  assert.equal(o.service.metadata?.labels?.[LAB_LABEL], 'abcd1234');
  // Not the collector's: its start-up cleanup (managed-by=cni-bench) leaves canaries alone.
  assert.equal(o.service.metadata?.labels?.['app.kubernetes.io/managed-by'], undefined);
});

test("the cilium DaemonSet's status: rolled out only once every node runs the observed generation", () => {
  const ds = ciliumDaemonSet('kube-system', 'abcd1234');
  assert.deepEqual(ds.spec?.selector.matchLabels, ds.spec?.template.metadata?.labels);
  const rolling = daemonSetStatus(3, 2, false);
  const done = daemonSetStatus(3, 2, true);
  // What the collector's rollout status waits for (collector/kubernetes/cilium-config.ts).
  const finished = (s: typeof done, generation: number) =>
    (s.observedGeneration ?? 0) >= generation &&
    (s.updatedNumberScheduled ?? 0) >= s.desiredNumberScheduled &&
    (s.numberAvailable ?? 0) >= s.desiredNumberScheduled;
  assert.equal(finished(rolling, 3), false);
  assert.equal(finished(done, 3), true);
  assert.equal(finished(done, 4), false, 'a newer template is not rolled out by an older status');
});
