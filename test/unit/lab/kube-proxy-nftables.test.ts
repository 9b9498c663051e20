import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseNftRuleset } from '../../../agent/samplers/nft.js';
import type { LabService } from '../../../lab/kube-proxy-iptables.js';
import {
  nftEndpointChain,
  nftServiceChain,
  renderNftBase,
  renderNftServicesAdd,
  renderNftServicesDelete,
} from '../../../lab/kube-proxy-nftables.js';
import { parseNftTables } from '../../support/harness/kube-proxy-nft-structure.js';
import { COMPARED_SERVICES } from '../../support/harness/kube-proxy-objects.js';
import { fixture } from '../../support/helpers/fixtures.js';

const svc = (
  ns: string,
  name: string,
  portName: string,
  ip: string,
  port: number,
  eps: [string, number][],
): LabService => ({
  namespace: ns,
  name,
  portName,
  clusterIp: ip,
  port,
  protocol: 'tcp',
  endpoints: eps.map(([i, p]) => ({ ip: i, port: p })),
});

// Expected names and rules are those in kube-proxy's pkg/proxy/nftables/proxier_test.go (v1.37.2):
// TestOverallNFTablesRules and its baseRules.
test('chain names are kube-proxy nftables names (values from kube-proxy proxier tests)', () => {
  const s1 = svc('ns1', 'svc1', 'p80', '172.30.0.41', 80, [['10.180.0.1', 80]]);
  assert.equal(nftServiceChain(s1), 'service-ULMVA6XW-ns1/svc1/tcp/p80');
  assert.equal(
    nftEndpointChain(s1, { ip: '10.180.0.1', port: 80 }),
    'endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80',
  );
  const s2 = svc('ns2', 'svc2', 'p8080', '172.30.0.42', 8080, [['10.0.2.1', 8080]]);
  assert.equal(nftServiceChain(s2), 'service-MHHHYRWA-ns2/svc2/tcp/p8080');
  assert.equal(
    nftEndpointChain(s2, { ip: '10.0.2.1', port: 8080 }),
    'endpoint-7RVP4LUQ-ns2/svc2/tcp/p8080__10.0.2.1/8080',
  );
});

test("a ClusterIP Service renders kube-proxy's rules and map elements: one chain, one DNAT, no endpoint chain", () => {
  const text = renderNftServicesAdd([svc('ns1', 'svc1', 'p80', '172.30.0.41', 80, [['10.180.0.1', 80]])]);
  assert.deepEqual(text.trim().split('\n'), [
    'add chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80',
    'add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 meta l4proto tcp dnat to 10.180.0.1:80',
    'add element ip kube-proxy cluster-ips { 172.30.0.41 }',
    'add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }',
  ]);
});

test('several endpoints are picked by numgen over an anonymous DNAT map, in order', () => {
  const text = renderNftServicesAdd([
    svc('ns4', 'svc4', 'p80', '172.30.0.44', 80, [
      ['10.180.0.4', 80],
      ['10.180.0.5', 80],
    ]),
  ]);
  const rules = text.split('\n').filter((l) => l.startsWith('add rule'));
  assert.deepEqual(rules, [
    'add rule ip kube-proxy service-LAUZTJTB-ns4/svc4/tcp/p80 meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.180.0.4 . 80 , 1 : 10.180.0.5 . 80 }',
  ]);
});

test('a Service without endpoints is refused (kube-proxy would reject its traffic instead)', () => {
  assert.throws(() => renderNftServicesAdd([svc('a', 'none', 'p', '198.19.0.10', 80, [])]), /no endpoints/);
});

test('objects come in load order: every chain before any rule, rules before map elements', () => {
  const text = renderNftServicesAdd(
    [
      svc('a', 'x', 'p', '198.19.0.10', 80, [['198.18.16.10', 8080]]),
      svc('a', 'y', 'p', '198.19.0.11', 80, [['198.18.16.11', 8080]]),
    ],
    '198.18.16.0/20',
  );
  const kinds = text
    .trim()
    .split('\n')
    .map((l) => l.split(' ')[1]);
  const lastChain = kinds.lastIndexOf('chain');
  const firstRule = kinds.indexOf('rule');
  const lastRule = kinds.lastIndexOf('rule');
  const firstElement = kinds.indexOf('element');
  assert.ok(lastChain < firstRule && lastRule < firstElement, kinds.join(','));
});

test("the base ruleset is kube-proxy's: every line of its proxier_test.go baseRules, and nothing else", () => {
  const base = renderNftBase({ serviceCidr: '172.30.0.0/16', nodeIp: '192.168.0.2', clusterCidr: '10.0.0.0/8' });
  const lines = (text: string): string[] =>
    text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .sort();
  assert.deepEqual(lines(base), lines(UPSTREAM_BASE_RULES));
});

test('deleting removes map elements before the chains they point to', () => {
  const text = renderNftServicesDelete([svc('ns1', 'svc1', 'p80', '172.30.0.41', 80, [['10.0.1.1', 80]])]);
  assert.deepEqual(text.trim().split('\n'), [
    'delete element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 }',
    'delete element ip kube-proxy cluster-ips { 172.30.0.41 }',
    'flush chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80',
    'delete chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80',
  ]);
});

// test/fixtures/kube-proxy-real/nft-list-ruleset.json: the real kube-proxy v1.37.2 for COMPARED_SERVICES (see its README).
test("the agent's parser reads the real kube-proxy's ruleset, whose service chains are the ones the emulation names", () => {
  const json = fixture('kube-proxy-real/nft-list-ruleset.json');
  const s = parseNftRuleset(json);
  assert.deepEqual(s.tables, [
    { family: 'ip', name: 'kube-proxy' },
    { family: 'ip6', name: 'kube-proxy' },
  ]);
  assert.equal(s.serviceIps, COMPARED_SERVICES.length);
  const table = parseNftTables(json)['ip kube-proxy'];
  const chains = Object.keys(table?.chains ?? {});
  assert.deepEqual(
    chains.filter((c) => /^service-[A-Z2-7]{8}-/.test(c)).sort(),
    COMPARED_SERVICES.map(nftServiceChain).sort(),
  );
  assert.deepEqual(
    chains.filter((c) => c.startsWith('endpoint-')),
    [],
  );
});

// baseRules of pkg/proxy/nftables/proxier_test.go at v1.37.2 (cluster CIDR 10.0.0.0/8, Service CIDR 172.30.0.0/16, node 192.168.0.2).
const UPSTREAM_BASE_RULES = `
add table ip kube-proxy { comment "rules for kube-proxy" ; }

add set ip kube-proxy cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }
add set ip kube-proxy nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }
add set ip kube-proxy hairpin-connections { type ipv4_addr . ipv4_addr . inet_proto . inet_service ; comment "service hairpin connections" ; }

add map ip kube-proxy firewall-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }
add map ip kube-proxy no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }
add map ip kube-proxy no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }
add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }
add map ip kube-proxy service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }

add chain ip kube-proxy cluster-ips-check
add chain ip kube-proxy filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }
add chain ip kube-proxy filter-output-pre-dnat { type filter hook output priority -110 ; }
add chain ip kube-proxy filter-forward { type filter hook forward priority 0 ; }
add chain ip kube-proxy filter-input { type filter hook input priority 0 ; }
add chain ip kube-proxy filter-output { type filter hook output priority 0 ; }
add chain ip kube-proxy firewall-check
add chain ip kube-proxy masquerading
add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }
add chain ip kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }
add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }
add chain ip kube-proxy nodeport-endpoints-check
add chain ip kube-proxy reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }
add chain ip kube-proxy services
add chain ip kube-proxy service-endpoints-check

add rule ip kube-proxy cluster-ips-check ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
add rule ip kube-proxy cluster-ips-check ip daddr { 172.30.0.0/16 } drop comment "Drop traffic to unallocated ClusterIPs"
add rule ip kube-proxy filter-prerouting-pre-dnat ct state new jump firewall-check
add rule ip kube-proxy filter-forward ct state new jump service-endpoints-check
add rule ip kube-proxy filter-forward ct state new jump cluster-ips-check
add rule ip kube-proxy filter-input ct state new jump nodeport-endpoints-check
add rule ip kube-proxy filter-input ct state new jump service-endpoints-check
add rule ip kube-proxy filter-output ct state new jump service-endpoints-check
add rule ip kube-proxy filter-output-pre-dnat ct state new jump firewall-check
add rule ip kube-proxy filter-output ct state new jump cluster-ips-check
add rule ip kube-proxy firewall-check ip daddr . meta l4proto . th dport vmap @firewall-ips
add rule ip kube-proxy masquerading mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random
add rule ip kube-proxy masquerading ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random
add rule ip kube-proxy nat-output jump services
add rule ip kube-proxy nat-postrouting jump masquerading
add rule ip kube-proxy nat-prerouting jump services
add rule ip kube-proxy nodeport-endpoints-check ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
add rule ip kube-proxy reject-chain reject
add rule ip kube-proxy services ip daddr @cluster-ips ip saddr != 10.0.0.0/8 mark set mark or 0x4000 comment "masquerade clusterIP traffic from outside cluster"
add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips
add rule ip kube-proxy services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports

add element ip kube-proxy nodeport-ips { 192.168.0.2 }
add rule ip kube-proxy service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services
`;
