/** bench/prom-text.ts on kube-apiserver 1.37's own /metrics, captured from a Cilium lab after 10,000 Services. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deltaOf, parsePromText, sumBy } from '../../../bench/prom-text.js';
import { fixture } from '../../support/helpers/fixtures.js';

const text = fixture('apiserver/metrics-after-10000-services.txt');

test('samples with their labels: requests by verb and resource, the ClusterIP allocator, etcd, APF', () => {
  const s = parsePromText(text);
  const requests = sumBy(s, 'apiserver_request_duration_seconds_count', ['verb', 'resource']);
  assert.equal(requests.get('POST services'), 10_001);
  assert.equal(requests.get('POST endpointslices'), 10_000);
  assert.equal(requests.get('POST ipaddresses'), 10_008);
  const alloc = sumBy(s, 'kube_apiserver_clusterip_allocator_allocation_total', ['scope']);
  assert.deepEqual(
    [...alloc],
    [
      ['dynamic', 10_000],
      ['static', 1],
    ],
  );
  assert.equal(
    sumBy(s, 'kube_apiserver_clusterip_allocator_allocation_duration_seconds_sum', []).get(''),
    179.4295195779999,
  );
  const etcd = sumBy(
    s,
    'etcd_request_duration_seconds_count',
    ['operation', 'resource'],
    (l) => l.operation === 'create',
  );
  assert.equal(etcd.get('create ipaddresses'), 10_008);
  assert.deepEqual(
    [...sumBy(s, 'apiserver_flowcontrol_dispatched_requests_total', ['priority_level'])],
    [['exempt', 31_037]],
  );
  const inf = s.find((x) => x.name === 'apiserver_request_duration_seconds_bucket' && x.labels.le === '+Inf');
  assert.equal(inf?.value, 10_001);
});

test('a window is the difference of two scrapes, a key missing before counting from 0', () => {
  const a = new Map([['POST services', 5001]]);
  const b = new Map([
    ['POST services', 10_001],
    ['POST ipaddresses', 10_008],
  ]);
  assert.deepEqual(
    [...deltaOf(a, b)],
    [
      ['POST services', 5000],
      ['POST ipaddresses', 10_008],
    ],
  );
});

test('a scrape cut mid-line, or a value that is no number, is an error naming kube-apiserver, never a zero', () => {
  assert.throws(
    () => parsePromText(fixture('apiserver/metrics-truncated.txt')),
    /kube-apiserver \/metrics: cannot parse/,
  );
  const line = text.split('\n').find((l) => l.startsWith('apiserver_watch_events_total{')) as string;
  assert.throws(() => parsePromText(line.replace(/ \d+$/, ' twelve')), /not a number/);
  assert.throws(() => parsePromText(line.replace('{group=""', '{group=')), /labels|sample/);
});
