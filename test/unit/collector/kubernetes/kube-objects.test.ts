/**
 * The objects the collector creates, as data: labels cleanup relies on, an
 * EndpointSlice the EndpointSlice controller leaves alone, fake endpoints in
 * the benchmarking range and distinct within a Service, and where a config
 * selects its Kubernetes API from.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kubeSource } from '../../../../collector/kubernetes/kube-config.js';
import {
  ALL_MANAGED,
  dummyPair,
  runSelector,
  SLICE_MANAGER,
  servicePair,
} from '../../../../collector/kubernetes/objects.js';
import { inBenchmarkRange } from '../../../../lab/plan.js';

test('a dummy Service has no selector, its slice names it, and both carry the run labels', () => {
  const { service, slice } = dummyPair('sweep', 300, 4, 'run-1');
  assert.equal(service.spec?.selector, undefined);
  assert.equal(service.metadata?.name, 'cni-bench-dummy-300');
  assert.equal(slice.metadata?.labels?.['kubernetes.io/service-name'], 'cni-bench-dummy-300');
  assert.equal(slice.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'], SLICE_MANAGER);
  for (const o of [service, slice]) {
    assert.equal(o.metadata?.labels?.['app.kubernetes.io/managed-by'], 'cni-bench');
    assert.equal(o.metadata?.labels?.['cni-bench.io/run-id'], 'run-1');
  }
  assert.equal(runSelector('run-1'), `${ALL_MANAGED},cni-bench.io/run-id=run-1`);
});

test('fake endpoints are distinct within a Service and inside 198.18.128.0/17', () => {
  for (const i of [0, 255, 256, 29_999, 31_999]) {
    const ips = (dummyPair('s', i, 128, 'r').slice.endpoints ?? []).map((e) => e.addresses[0] ?? '');
    assert.equal(new Set(ips).size, 128, `service ${i}`);
    for (const ip of ips) {
      assert.ok(inBenchmarkRange(ip), ip);
      assert.ok(Number(ip.split('.')[2]) >= 128, ip);
    }
  }
  assert.throws(() => dummyPair('s', 0, 129, 'r'), /serviceScale\.endpointsPerService: 1 to 128/);
  assert.throws(() => dummyPair('s', 0, 0, 'r'), /serviceScale\.endpointsPerService/);
});

test('a fronting Service needs one port for all its endpoints', () => {
  const p = servicePair('ns', 'cni-bench-wrk', 80, [{ ip: '198.18.16.10', port: 8080 }], 'r', 'frontend');
  assert.equal(p.service.spec?.ports?.[0]?.targetPort, 8080);
  assert.equal(p.slice.ports?.[0]?.port, 8080);
  assert.throws(
    () =>
      servicePair(
        'ns',
        'x',
        80,
        [
          { ip: '198.18.16.10', port: 1 },
          { ip: '198.18.16.11', port: 2 },
        ],
        'r',
        'frontend',
      ),
    /endpoints/,
  );
});

test('a fronting Service for netserver carries its data port as a second named port, in the Service and the EndpointSlice', () => {
  const p = servicePair('ns', 'cni-bench-netserver', 12965, [{ ip: '198.18.16.10', port: 12965 }], 'r', 'frontend', [
    { name: 'data', port: 12966, targetPort: 12966 },
  ]);
  assert.deepEqual(
    p.service.spec?.ports?.map((x) => [x.name, x.port, x.targetPort]),
    [
      ['p', 12965, 12965],
      ['data', 12966, 12966],
    ],
  );
  assert.deepEqual(
    p.slice.ports?.map((x) => [x.name, x.port]),
    [
      ['p', 12965],
      ['data', 12966],
    ],
  );
});

test('the Kubernetes API source: auto prefers in-cluster, then a kubeconfig, else none', () => {
  assert.equal(kubeSource({ kubernetes: 'auto', kubeconfig: '' }, {}), 'none');
  assert.equal(kubeSource({ kubernetes: 'auto', kubeconfig: '/k' }, {}), 'kubeconfig');
  assert.equal(
    kubeSource({ kubernetes: 'auto', kubeconfig: '/k' }, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }),
    'in-cluster',
  );
  assert.equal(kubeSource({ kubernetes: 'off', kubeconfig: '/k' }, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }), 'none');
  assert.throws(() => kubeSource({ kubernetes: 'kubeconfig', kubeconfig: '' }, {}), /kubeconfig: required/);
});
