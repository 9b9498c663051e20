import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LabService } from '../../lab/kube-proxy-iptables.js';
import { nftEndpointChain, nftServiceChain, renderNftBase, renderNftServicesAdd, renderNftServicesDelete } from '../../lab/kube-proxy-nftables.js';

const svc = (ns: string, name: string, portName: string, ip: string, port: number, eps: [string, number][]): LabService => ({
  namespace: ns,
  name,
  portName,
  clusterIp: ip,
  port,
  protocol: 'tcp',
  endpoints: eps.map(([i, p]) => ({ ip: i, port: p })),
});

// Expected names and rules are those in kube-proxy's pkg/proxy/nftables/proxier_test.go (v1.34 era):
// TestSyncProxyRulesRepeated and TestOverallNFTablesRules.
test('chain names are kube-proxy nftables names (values from kube-proxy proxier tests)', () => {
  const s1 = svc('ns1', 'svc1', 'p80', '172.30.0.41', 80, [['10.180.0.1', 80]]);
  assert.equal(nftServiceChain(s1), 'service-ULMVA6XW-ns1/svc1/tcp/p80');
  assert.equal(nftEndpointChain(s1, { ip: '10.180.0.1', port: 80 }), 'endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80');
  const s2 = svc('ns2', 'svc2', 'p8080', '172.30.0.42', 8080, [['10.0.2.1', 8080]]);
  assert.equal(nftServiceChain(s2), 'service-MHHHYRWA-ns2/svc2/tcp/p8080');
  assert.equal(nftEndpointChain(s2, { ip: '10.0.2.1', port: 8080 }), 'endpoint-7RVP4LUQ-ns2/svc2/tcp/p8080__10.0.2.1/8080');
});

test("a ClusterIP Service renders kube-proxy's rules and map elements", () => {
  const text = renderNftServicesAdd([svc('ns1', 'svc1', 'p80', '172.30.0.41', 80, [['10.0.1.1', 80]])], '10.0.0.0/8');
  const lines = new Set(text.trim().split('\n'));
  for (const want of [
    'add chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80',
    'add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 ip daddr 172.30.0.41 ip saddr != 10.0.0.0/8 jump mark-for-masquerade',
    'add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 numgen random mod 1 vmap { 0 : goto endpoint-5TPGNJF2-ns1/svc1/tcp/p80__10.0.1.1/80 }',
    'add chain ip kube-proxy endpoint-5TPGNJF2-ns1/svc1/tcp/p80__10.0.1.1/80',
    'add rule ip kube-proxy endpoint-5TPGNJF2-ns1/svc1/tcp/p80__10.0.1.1/80 ip saddr 10.0.1.1 jump mark-for-masquerade',
    'add rule ip kube-proxy endpoint-5TPGNJF2-ns1/svc1/tcp/p80__10.0.1.1/80 meta l4proto tcp dnat to 10.0.1.1:80',
    'add element ip kube-proxy cluster-ips { 172.30.0.41 }',
    'add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }',
  ]) {
    assert.ok(lines.has(want), `missing: ${want}`);
  }
  assert.equal(lines.size, 8);
});

test('several endpoints are picked with numgen over a vmap, in order', () => {
  const text = renderNftServicesAdd([svc('ns4', 'svc4', 'p80', '172.30.0.44', 80, [['10.180.0.4', 80], ['10.180.0.5', 80]])], '10.0.0.0/8');
  assert.match(text, /numgen random mod 2 vmap \{ 0 : goto endpoint-UNZV3OEC-ns4\/svc4\/tcp\/p80__10\.180\.0\.4\/80 , 1 : goto endpoint-5RFCDDV7-ns4\/svc4\/tcp\/p80__10\.180\.0\.5\/80 \}/);
});

test('objects come in load order: every chain before any rule, rules before map elements', () => {
  const text = renderNftServicesAdd(
    [svc('a', 'x', 'p', '198.19.0.10', 80, [['198.18.16.10', 8080]]), svc('a', 'y', 'p', '198.19.0.11', 80, [['198.18.16.11', 8080]])],
    '198.18.16.0/20',
  );
  const kinds = text.trim().split('\n').map((l) => l.split(' ')[1]);
  const lastChain = kinds.lastIndexOf('chain');
  const firstRule = kinds.indexOf('rule');
  const lastRule = kinds.lastIndexOf('rule');
  const firstElement = kinds.indexOf('element');
  assert.ok(lastChain < firstRule && lastRule < firstElement, kinds.join(','));
});

test('the base ruleset hooks nat prerouting and output into services and dispatches through service-ips', () => {
  const base = renderNftBase({ serviceCidr: '198.19.0.0/16', nodeIp: '198.18.0.1' });
  assert.match(base, /^add chain ip kube-proxy nat-prerouting \{ type nat hook prerouting priority -100 ; \}$/m);
  assert.match(base, /^add rule ip kube-proxy nat-prerouting jump services$/m);
  assert.match(base, /^add rule ip kube-proxy services ip daddr \. meta l4proto \. th dport vmap @service-ips$/m);
  assert.match(base, /^add rule ip kube-proxy cluster-ips-check ip daddr \{ 198\.19\.0\.0\/16 \} drop/m);
});

test('deleting removes map elements before the chains they point to', () => {
  const text = renderNftServicesDelete([svc('ns1', 'svc1', 'p80', '172.30.0.41', 80, [['10.0.1.1', 80]])]);
  const lines = text.trim().split('\n');
  assert.equal(lines[0], 'delete element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 }');
  assert.ok(lines.indexOf('delete chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80') < lines.indexOf('delete chain ip kube-proxy endpoint-5TPGNJF2-ns1/svc1/tcp/p80__10.0.1.1/80'));
});
