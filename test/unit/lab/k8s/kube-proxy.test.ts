import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KUBE_PROXY_HEALTHZ, kubeProxyArgs, parseKubeProxyHealthz } from '../../../../lab/k8s/kube-proxy.js';
import {
  iptablesServiceEndpoints,
  nftServiceEndpoints,
  programmedAs,
  rulesDumpCommand,
} from '../../../../lab/k8s/kube-proxy-rules.js';
import { CLUSTER_CIDR } from '../../../../lab/plan.js';
import { fixture } from '../../../support/helpers/fixtures.js';

test("kube-proxy's flags: its mode, node and kubeconfig; machine-wide state left alone; healthz on the namespace's loopback", () => {
  const args = kubeProxyArgs({ mode: 'nftables', nodeName: 'n1', kubeconfig: '/k' });
  assert.deepEqual(args.slice(0, 4), [
    '--kubeconfig=/k',
    '--proxy-mode=nftables',
    '--hostname-override=n1',
    `--cluster-cidr=${CLUSTER_CIDR}`,
  ]);
  for (const f of ['--conntrack-max-per-core=0', '--oom-score-adj=0', `--healthz-bind-address=${KUBE_PROXY_HEALTHZ}`])
    assert.ok(args.includes(f), f);
  assert.ok(KUBE_PROXY_HEALTHZ.startsWith('127.0.0.1:'));
  assert.ok(
    args.every((a) => !a.includes('0.0.0.0')),
    'nothing listens beyond loopback',
  );
  assert.equal(kubeProxyArgs({ mode: 'iptables', nodeName: 'n', kubeconfig: 'k', verbosity: 4 }).at(-1), '--v=4');
});

// The shape of pkg/proxy/healthcheck/proxy_health.go v1.37.2 (ProxyHealth marshalled): status per IP family once synced.
test("kube-proxy /healthz: a proxier's own lastUpdated says a sync ran; the top-level one does not", () => {
  const starting =
    '{"lastUpdated":"2026-12-06T16:40:00.5Z","currentTime":"2026-12-06T16:40:00.5Z","nodeEligible":true,"healthy":true}';
  assert.deepEqual(parseKubeProxyHealthz(200, starting), { status: 200, syncedMs: undefined });
  const synced =
    '{"lastUpdated":"2026-12-06T16:40:02.9Z","currentTime":"2026-12-06T16:40:02.9Z","nodeEligible":true,"healthy":true,"status":{"IPv4":{"lastUpdated":"2026-12-06T16:40:01.123456789Z","healthy":true},"IPv6":{"lastUpdated":"2026-12-06T16:40:01.2Z","healthy":true}}}';
  assert.deepEqual(parseKubeProxyHealthz(200, synced), {
    status: 200,
    syncedMs: Date.parse('2026-12-06T16:40:01.123Z'),
  });
  assert.equal(parseKubeProxyHealthz(503, synced.replace(/"healthy":true/g, '"healthy":false')).status, 503);
  // test/fixtures/kube-proxy-real/healthz-200.json: a lab node's kube-proxy v1.37.2 (nftables mode), 10 min after its sync.
  const real = fixture('kube-proxy-real/healthz-200.json');
  assert.deepEqual(parseKubeProxyHealthz(200, real), {
    status: 200,
    syncedMs: Date.parse('2026-12-06T16:45:48.197Z'),
  });
  assert.throws(() => parseKubeProxyHealthz(200, real.slice(0, 100)), /not JSON/);
  assert.throws(() => parseKubeProxyHealthz(200, 'ok'), /kube-proxy \/healthz: HTTP 200, not JSON/);
  assert.throws(() => parseKubeProxyHealthz(200, '{"status":"x"}'), /not kube-proxy's health/);
  assert.throws(() => parseKubeProxyHealthz(200, synced.replace('2026-12-06T16:40:01.2Z', 'soon')), /not a time/);
  assert.throws(() => parseKubeProxyHealthz(200, synced.slice(0, 60)), /not JSON/);
});

// test/fixtures/kube-proxy-real/: what the real kube-proxy v1.37.2 wrote (README there).
test('iptables mode: the endpoints KUBE-SERVICES sends a ClusterIP:port to, through its KUBE-SVC chain', () => {
  const save = fixture('kube-proxy-real/iptables-save.txt');
  assert.deepEqual(iptablesServiceEndpoints(save, '198.19.129.10', 80), ['198.18.200.10:8080']);
  assert.deepEqual(iptablesServiceEndpoints(save, '198.19.129.11', 80), ['198.18.201.10:8080', '198.18.201.11:8080']);
  assert.equal(iptablesServiceEndpoints(save, '198.19.129.12', 80)?.length, 4);
  assert.equal(iptablesServiceEndpoints(save, '198.19.129.11', 81), undefined, 'another port');
  assert.equal(iptablesServiceEndpoints(save, '198.19.129.1', 80), undefined, 'a prefix of another IP');
  // A Service without endpoints is a REJECT, not programmed.
  assert.equal(iptablesServiceEndpoints(save, '198.19.0.1', 443), undefined);
  assert.equal(iptablesServiceEndpoints(fixture('iptables-save-truncated.txt'), '198.19.129.10', 80), undefined);
  // Above 1,000 endpoints kube-proxy writes no comments (seen in a lab with 1,000 dummy Services): the same rules without them.
  const bare = save.replace(/ -m comment --comment "[^"]*"/g, '');
  assert.ok(!bare.includes('--comment'));
  assert.deepEqual(iptablesServiceEndpoints(bare, '198.19.129.11', 80), ['198.18.201.10:8080', '198.18.201.11:8080']);
  // A KUBE-SEP chain cut off before its DNAT is not an endpoint.
  const cut = save.replace(/^-A KUBE-SEP-AFUPTMP7UWGITLDJ -p tcp .*$/m, '');
  assert.deepEqual(iptablesServiceEndpoints(cut, '198.19.129.11', 80), [
    '198.18.201.11:8080',
    'KUBE-SEP-AFUPTMP7UWGITLDJ (no DNAT)',
  ]);
});

test('nftables mode: the endpoints the service-ips element for ClusterIP . tcp . port DNATs to', () => {
  const table = fixture('kube-proxy-real/nft-list-ruleset.txt');
  assert.deepEqual(nftServiceEndpoints(table, '198.19.129.10', 80), ['198.18.200.10:8080']);
  assert.deepEqual(nftServiceEndpoints(table, '198.19.129.11', 80), ['198.18.201.10:8080', '198.18.201.11:8080']);
  assert.equal(nftServiceEndpoints(table, '198.19.129.12', 80)?.length, 4);
  assert.deepEqual(nftServiceEndpoints(table, '198.19.128.0', 80), [
    '198.18.128.0:10000',
    '198.18.128.0:10001',
    '198.18.128.0:10002',
  ]);
  assert.equal(nftServiceEndpoints(table, '198.19.129.10', 81), undefined);
  assert.equal(nftServiceEndpoints(table, '198.19.129.1', 80), undefined);
  // Cut before the service chains: the element is there, its chain is not.
  assert.equal(
    nftServiceEndpoints(table.slice(0, table.indexOf('chain service-XIRW66ZY')), '198.19.129.10', 80),
    undefined,
  );
});

test('programmed means exactly the wanted endpoints, in either mode', () => {
  const save = fixture('kube-proxy-real/iptables-save.txt');
  const table = fixture('kube-proxy-real/nft-list-ruleset.txt');
  const two = [
    { ip: '198.18.201.11', port: 8080 },
    { ip: '198.18.201.10', port: 8080 },
  ];
  assert.ok(programmedAs('iptables', save, '198.19.129.11', 80, two));
  assert.ok(programmedAs('nftables', table, '198.19.129.11', 80, two));
  assert.ok(!programmedAs('iptables', save, '198.19.129.11', 80, two.slice(1)), 'an endpoint still there');
  assert.ok(!programmedAs('nftables', table, '198.19.129.11', 80, [...two, { ip: '198.18.201.12', port: 8080 }]));
  assert.deepEqual(rulesDumpCommand('iptables'), ['iptables-save', ['-t', 'nat']]);
  assert.deepEqual(rulesDumpCommand('nftables'), ['nft', ['list', 'table', 'ip', 'kube-proxy']]);
});
