/**
 * How a sweep sizes its fresh Cilium lab: Cilium's default LB map where it
 * holds the largest step, else the next power of two, written into the lab's
 * cilium-config; and every lab dataplane mapped to its proxy options.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ciliumConfigData } from '../../../lab/cilium/config.js';
import { dataplaneProxy, LAB_DATAPLANES } from '../../../lab/proxy.js';
import { CILIUM_LB_MAP_DEFAULT, LB_MAP_HEADROOM, lbMapMaxFor } from '../../../lab/sweep-plan.js';

test('the LB map stays at Cilium default while the largest step fits, else the next power of two', () => {
  assert.equal(lbMapMaxFor(10_000, 4), undefined, '60,256 entries fit 65,536');
  const most = Math.floor((CILIUM_LB_MAP_DEFAULT - LB_MAP_HEADROOM) / 6);
  assert.equal(lbMapMaxFor(most, 4), undefined);
  assert.equal(lbMapMaxFor(most + 1, 4), 131_072);
  assert.equal(lbMapMaxFor(30_000, 4), 262_144, '180,256 entries');
  assert.equal(lbMapMaxFor(0, 100), undefined);
});

test('a sized lab writes bpf-lb-map-max into cilium-config; an unsized one leaves Cilium its default', () => {
  const base = { dataplane: 'cilium' as const, clusterCidr: '198.18.16.0/20', labId: 'x' };
  assert.equal(ciliumConfigData({ ...base, lbMapMax: 262_144 })['bpf-lb-map-max'], '262144');
  assert.equal('bpf-lb-map-max' in ciliumConfigData(base), false);
});

test('every lab dataplane maps to proxy options; the iptables backend only where it applies', () => {
  assert.deepEqual(LAB_DATAPLANES, [
    'iptables',
    'nftables',
    'kube-proxy-iptables',
    'kube-proxy-nftables',
    'cilium',
    'cilium-vxlan',
  ]);
  assert.deepEqual(dataplaneProxy('kube-proxy-iptables', { iptablesBackend: 'nft', lbMapMax: 1 }), {
    mode: 'kube-proxy-iptables',
  });
  assert.deepEqual(dataplaneProxy('iptables', { iptablesBackend: 'nft', lbMapMax: 1 }), {
    mode: 'iptables',
    iptablesBackend: 'nft',
  });
  assert.deepEqual(dataplaneProxy('nftables', { iptablesBackend: 'nft' }), { mode: 'nftables' });
  assert.deepEqual(dataplaneProxy('cilium-vxlan', { lbMapMax: 131_072 }), { mode: 'cilium-vxlan', lbMapMax: 131_072 });
  assert.deepEqual(dataplaneProxy('cilium', {}), { mode: 'cilium' });
});
