/**
 * The cluster description from API objects (test/fixtures/cluster, shaped as
 * each CNI, kubeadm and Cilium write them): CNI and mode from node annotations
 * or cilium-config, kube-proxy's mode from kubeadm's ConfigMap, node facts
 * listed when nodes differ, and every unreadable or malformed input a coded
 * note naming the object, never a default.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { ciliumModeOf } from '../../../../collector/kubernetes/cilium-mode.js';
import {
  type ApiObservations,
  type ConfigMapRead,
  detectCluster,
} from '../../../../collector/kubernetes/cluster-detect.js';
import { cniFromNodes } from '../../../../collector/kubernetes/cni-annotations.js';
import { kubeProxyModeOf } from '../../../../collector/kubernetes/kube-proxy-mode.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { fixture } from '../../../support/helpers/fixtures.js';

const nodes = (name: string): V1Node[] => (JSON.parse(fixture(`cluster/${name}.json`)) as { items: V1Node[] }).items;
const data = (name: string): Record<string, string> =>
  (JSON.parse(fixture(`cluster/${name}.json`)) as { data: Record<string, string> }).data;
const found = (name: string): ConfigMapRead => ({ state: 'found', data: data(name) });
const NOT_FOUND: ConfigMapRead = { state: 'not-found' };

function observe(over: Partial<ApiObservations>): ApiObservations {
  return {
    version: 'v1.37.2',
    nodes: nodes('nodes-plain'),
    kubeProxy: NOT_FOUND,
    ciliumConfig: NOT_FOUND,
    ciliumNamespace: 'kube-system',
    ...over,
  };
}

test('flannel: the backend-type annotation gives the CNI and its mode', () => {
  assert.deepEqual(cniFromNodes(nodes('nodes-flannel-vxlan')), {
    cni: 'flannel',
    cniMode: 'vxlan',
    modes: { flannel: 'vxlan' },
    evidence: ['flannel: node annotation flannel.alpha.coreos.com/backend-type on 3 nodes of 3'],
    notes: [],
  });
  assert.equal(cniFromNodes(nodes('nodes-flannel-host-gw')).cniMode, 'host-gw');
});

test('Calico: the tunnel address annotations give the encapsulation; a node without them is named', () => {
  assert.equal(cniFromNodes(nodes('nodes-calico-ipip')).cniMode, 'ipip');
  const mixed = cniFromNodes(nodes('nodes-calico-vxlan-mixed'));
  assert.equal(mixed.cni, 'calico');
  assert.equal(mixed.cniMode, 'vxlan');
  assert.deepEqual(mixed.notes, ['1 node carries no CNI annotation: worker-3']);
  const bgpOnly = nodes('nodes-calico-ipip').map((n) => ({
    ...n,
    metadata: { ...n.metadata, annotations: { 'projectcalico.org/IPv4Address': '192.0.2.11/24' } },
  }));
  assert.equal(cniFromNodes(bgpOnly).cniMode, 'no tunnel address (unencapsulated)');
});

test('Cilium: the current and the older annotation keys both count; the mode is left to cilium-config', () => {
  const c = cniFromNodes(nodes('nodes-cilium-annotated'));
  assert.equal(c.cni, 'cilium');
  assert.equal(c.cniMode, undefined);
  assert.deepEqual(c.evidence, [
    'cilium: node annotation network.cilium.io/ipv4-cilium-host, io.cilium.network.ipv4-cilium-host on 2 nodes of 2',
  ]);
  assert.deepEqual(cniFromNodes(nodes('nodes-plain')), { modes: {}, evidence: [], notes: [] });
});

test('cilium-config: routing-mode, tunnel-protocol (default vxlan), the pre-1.14 tunnel key, kube-proxy replacement and encryption', () => {
  const w = 'kube-system/cilium-config';
  const native = ciliumModeOf(data('cilium-config-native-kpr'), w);
  assert.equal(native.cniMode, 'native routing + wireguard');
  assert.equal(native.replacesKubeProxy, true);
  assert.deepEqual(native.notes, []);
  assert.equal(ciliumModeOf(data('cilium-config-tunnel-geneve'), w).cniMode, 'geneve tunnel');
  const dflt = ciliumModeOf(data('cilium-config-tunnel-default'), w);
  assert.equal(dflt.cniMode, 'vxlan tunnel');
  assert.match(dflt.evidence[0]!, /tunnel-protocol=unset \(Cilium's default vxlan\)/);
  const old = ciliumModeOf(data('cilium-config-1.13'), w);
  assert.deepEqual([old.cniMode, old.replacesKubeProxy], ['native routing', true]);
  const partial = ciliumModeOf(data('cilium-config-partial'), w);
  assert.deepEqual([partial.cniMode, partial.replacesKubeProxy], ['vxlan tunnel', false]);
  assert.match(partial.notes[0]!, /kube-proxy-replacement=partial replaces only part of kube-proxy/);
  assert.match(
    ciliumModeOf({ 'routing-mode': 'hybrid' }, w).notes[0]!,
    /routing-mode 'hybrid' is not one Cilium documents/,
  );
});

test('kube-proxy ConfigMap: kubeadm v1.37 (iptables), the empty mode (iptables, said so), nftables, ipvs', () => {
  assert.deepEqual(kubeProxyModeOf(data('kube-proxy-kubeadm-v1.37')), {
    mode: 'iptables',
    evidence: 'configmap kube-system/kube-proxy key config.conf: mode iptables',
  });
  const empty = kubeProxyModeOf(data('kube-proxy-kubeadm-empty-mode'));
  assert.equal(empty.mode, 'iptables');
  assert.match(empty.evidence, /mode empty, kube-proxy's Linux default iptables/);
  assert.equal(kubeProxyModeOf(data('kube-proxy-nftables')).mode, 'nftables');
  assert.equal(
    kubeProxyModeOf(data('kube-proxy-written-nftables')).mode,
    'nftables',
    'the configuration the real kube-proxy v1.37 writes',
  );
  assert.equal(kubeProxyModeOf(data('kube-proxy-ipvs')).mode, 'ipvs');
});

test('a malformed kube-proxy ConfigMap is a PARSE error naming the ConfigMap and key, never the default mode', () => {
  const cases: [string, RegExp][] = [
    ['kube-proxy-not-yaml', /configmap kube-system\/kube-proxy key config\.conf: not YAML \(/],
    ['kube-proxy-no-key', /config\.conf: missing \(keys: kubeconfig\.conf\)/],
    ['kube-proxy-bad-mode', /mode 'userspace' is not one kube-proxy accepts/],
    ['kube-proxy-not-a-kube-proxy-config', /kind is "Config", not KubeProxyConfiguration/],
  ];
  for (const [name, message] of cases) {
    assert.throws(
      () => kubeProxyModeOf(data(name)),
      (err: unknown) => {
        assert.ok(isCniBenchError(err, 'E_PARSE'), `${name}: ${String(err)}`);
        assert.match(err.message, message);
        assert.deepEqual([err.details.configMap, err.details.key], ['kube-system/kube-proxy', 'config.conf']);
        return true;
      },
    );
  }
  const d = detectCluster(observe({ kubeProxy: found('kube-proxy-not-yaml') }));
  assert.equal(d.kubeProxyMode, undefined, 'no mode is made up');
  assert.match(
    d.notes.join('\n'),
    /kube-proxy mode unknown: E_PARSE configmap kube-system\/kube-proxy key config\.conf: not YAML/,
  );
});

test('the whole description: flannel + kubeadm nftables, with version and node facts', () => {
  const d = detectCluster(observe({ nodes: nodes('nodes-flannel-vxlan'), kubeProxy: found('kube-proxy-nftables') }));
  assert.deepEqual(
    { ...d, evidence: d.evidence.length },
    {
      kubernetesVersion: 'v1.37.2',
      kernel: '6.1.0-28-amd64',
      osImage: 'Debian GNU/Linux 12 (bookworm)',
      containerRuntime: 'containerd://1.7.24',
      nodeType: 'm6i.large',
      cni: 'flannel',
      cniMode: 'vxlan',
      kubeProxyMode: 'nftables',
      notes: [],
      evidence: 3,
    },
  );
});

test('nodes that differ: kernels, OS images, runtimes and instance types are listed with counts, never one picked', () => {
  const d = detectCluster(observe({ nodes: nodes('nodes-calico-vxlan-mixed') }));
  assert.equal(d.kernel, '6.8.0-1015-aws (3 nodes), 6.1.0-28-amd64 (1 node)');
  assert.equal(d.osImage, 'Ubuntu 24.04.1 LTS (3 nodes), Debian GNU/Linux 12 (bookworm) (1 node)');
  assert.equal(d.containerRuntime, 'containerd://1.7.24 (3 nodes), containerd://2.0.1 (1 node)');
  assert.equal(d.nodeType, 'm6i.large (3 nodes), c6i.xlarge (1 node)');
});

test('Cilium with kube-proxy replacement: kube-proxy mode none; a kube-proxy ConfigMap beside it is a note', () => {
  const d = detectCluster(
    observe({
      nodes: nodes('nodes-plain'),
      ciliumConfig: found('cilium-config-native-kpr'),
      kubeProxy: found('kube-proxy-kubeadm-v1.37'),
    }),
  );
  assert.deepEqual(
    [d.cni, d.cniMode, d.kubeProxyMode],
    ['cilium', 'native routing + wireguard', 'none (Cilium kube-proxy replacement)'],
  );
  assert.match(
    d.notes.join('\n'),
    /cilium-config replaces kube-proxy, yet configmap kube-system\/kube-proxy sets mode iptables/,
  );
  const plain = detectCluster(
    observe({ ciliumConfig: found('cilium-config-tunnel-geneve'), kubeProxy: found('kube-proxy-kubeadm-v1.37') }),
  );
  assert.deepEqual(
    [plain.cni, plain.cniMode, plain.kubeProxyMode, plain.notes],
    ['cilium', 'geneve tunnel', 'iptables', []],
  );
});

test('what cannot be read is a note naming the grant; a missing ConfigMap is evidence, not an error', () => {
  const d = detectCluster(
    observe({
      version: undefined,
      nodes: nodes('nodes-flannel-host-gw'),
      kubeProxy: {
        state: 'forbidden',
        grant: 'get configmaps/kube-proxy in kube-system (chart: rbac.clusterDescription.read)',
      },
      ciliumConfig: { state: 'failed', message: 'HTTP 500' },
    }),
  );
  assert.deepEqual(d.notes, [
    'Kubernetes version not read (GET /version failed)',
    'configmap kube-system/cilium-config not read: HTTP 500',
    'configmap kube-system/kube-proxy not read: the collector may not get it (grant get configmaps/kube-proxy in kube-system (chart: rbac.clusterDescription.read))',
  ]);
  assert.deepEqual(
    [d.cni, d.cniMode, d.kubeProxyMode, d.kubernetesVersion],
    ['flannel', 'host-gw', undefined, undefined],
  );
  const none = detectCluster(observe({}));
  assert.deepEqual(none.notes, []);
  assert.match(none.evidence.join('\n'), /configmap kube-system\/kube-proxy: not found/);
});
