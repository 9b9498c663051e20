/**
 * The Cilium lab's pure parts: what it tells Cilium (cilium-config, read back
 * by the collector's own detection as the report's Cluster line does), the
 * objects it registers, the CNI result it parses (captured from the real
 * cilium-cni v1.20.2), where cgroup2 is, and the control plane's flags.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { detectCluster } from '../../../../collector/kubernetes/cluster-detect.js';
import { ErrorCodes, isCniBenchError } from '../../../../core/errors.js';
import { cgroup2MountFrom } from '../../../../lab/cilium/cgroups.js';
import { cniConfig, parseCniAddResult } from '../../../../lab/cilium/cni.js';
import { ciliumConfigData, configDirFiles } from '../../../../lab/cilium/config.js';
import { labPodName } from '../../../../lab/cilium/dataplane.js';
import { nodeStatus, osImageFrom, podObject, withoutLifecycleTaints } from '../../../../lab/cilium/objects.js';
import { controlPlaneArgs, LAB_API_IP } from '../../../../lab/k8s/control-plane.js';
import { CLUSTER_CIDR, inBenchmarkRange } from '../../../../lab/plan.js';
import { isCiliumMode } from '../../../../lab/proxy.js';

const fixture = (name: string): string =>
  readFileSync(fileURLToPath(new URL(`../../../../../test/fixtures/${name}`, import.meta.url)), 'utf8');

function detected(data: Record<string, string>) {
  return detectCluster({
    version: 'v1.37.2',
    nodes: [],
    kubeProxy: { state: 'not-found' },
    ciliumConfig: { state: 'found', data },
    ciliumNamespace: 'kube-system',
  });
}

test('cilium: native routing over the lab cluster CIDR, kube-proxy replacement, and the collector detects exactly that', () => {
  const data = ciliumConfigData({ dataplane: 'cilium', clusterCidr: CLUSTER_CIDR, labId: 'abcd' });
  assert.equal(data['routing-mode'], 'native');
  assert.equal(data['ipv4-native-routing-cidr'], CLUSTER_CIDR);
  assert.equal(data['auto-direct-node-routes'], 'true');
  assert.equal(data['kube-proxy-replacement'], 'true');
  assert.equal(data['enable-hubble'], 'false');
  assert.equal(data['identity-allocation-mode'], 'crd');
  assert.equal(data.ipam, 'kubernetes');
  assert.equal(data['tunnel-protocol'], undefined);
  const d = detected(data);
  assert.equal(d.cni, 'cilium');
  assert.equal(d.cniMode, 'native routing');
  assert.equal(d.kubeProxyMode, 'none (Cilium kube-proxy replacement)');
});

test('cilium-vxlan: the VXLAN tunnel, no native-routing keys, detected as a vxlan tunnel', () => {
  const data = ciliumConfigData({ dataplane: 'cilium-vxlan', clusterCidr: CLUSTER_CIDR, labId: 'abcd' });
  assert.equal(data['routing-mode'], 'tunnel');
  assert.equal(data['tunnel-protocol'], 'vxlan');
  assert.equal(data['auto-direct-node-routes'], undefined);
  assert.equal(data['ipv4-native-routing-cidr'], undefined);
  assert.equal(detected(data).cniMode, 'vxlan tunnel');
  assert.equal(detected(data).kubeProxyMode, 'none (Cilium kube-proxy replacement)');
});

test('an unknown Cilium dataplane is a validation error naming the field', () => {
  assert.throws(
    () => ciliumConfigData({ dataplane: 'cilium-geneve' as never, clusterCidr: CLUSTER_CIDR, labId: 'abcd' }),
    (err) => isCniBenchError(err, ErrorCodes.VALIDATION) && err.details.field === 'dataplane',
  );
  assert.ok(isCiliumMode('cilium') && isCiliumMode('cilium-vxlan') && !isCiliumMode('iptables'));
});

test('the agents read the ConfigMap as their config dir: one file per key, nothing empty', () => {
  const data = ciliumConfigData({ dataplane: 'cilium', clusterCidr: CLUSTER_CIDR, labId: 'abcd' });
  const files = configDirFiles(data);
  assert.equal(files.length, Object.keys(data).length);
  assert.ok(files.every(([k, v]) => k && v));
});

test('cilium-cni ADD result (captured from the real plugin): the pod address and its host-side lxc link', () => {
  const r = parseCniAddResult(fixture('cilium-cni-add-result.json'));
  assert.ok(inBenchmarkRange(r.ip), r.ip);
  assert.match(r.hostIf ?? '', /^lxc/);
});

test('cilium-cni output that is not a result: a parse error naming the tool, never an address', () => {
  for (const bad of [
    '',
    '{"code":100,"msg":"Unable to connect to Cilium daemon"}',
    '{"ips":[{"address":"fd00::1/128"}]}',
    '{"ips":[{"addr',
  ]) {
    assert.throws(
      () => parseCniAddResult(bad),
      (err) => isCniBenchError(err, ErrorCodes.PARSE) && /cilium-cni/.test(err.message),
      bad,
    );
  }
  assert.deepEqual(JSON.parse(cniConfig('/x/cni.log')), {
    cniVersion: '1.0.0',
    name: 'cilium',
    type: 'cilium-cni',
    'enable-debug': false,
    'log-file': '/x/cni.log',
  });
});

test('cgroup2 is found wherever it is mounted (pure v2 or a hybrid host), and absent when it is not', () => {
  const hybrid = [
    '35 24 0:30 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755',
    '36 35 0:31 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw',
  ].join('\n');
  assert.equal(cgroup2MountFrom(hybrid), '/sys/fs/cgroup/unified');
  assert.equal(
    cgroup2MountFrom('30 24 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate'),
    '/sys/fs/cgroup',
  );
  assert.equal(cgroup2MountFrom('22 1 0:21 / /proc rw - proc proc rw'), undefined);
});

test('Node status as a kubelet writes it, and Pods bound to their node with the agent label', () => {
  const s = nodeStatus('lab-n1', '198.18.0.2', {
    kernel: '6.18.0',
    osImage: 'Debian GNU/Linux 12 (bookworm)',
    architecture: 'amd64',
  });
  assert.deepEqual(s.addresses?.[0], { type: 'InternalIP', address: '198.18.0.2' });
  assert.equal(s.conditions?.[0]?.status, 'True');
  assert.equal(s.nodeInfo?.kernelVersion, '6.18.0');
  assert.equal(
    osImageFrom('NAME="Debian"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n'),
    'Debian GNU/Linux 12 (bookworm)',
  );
  const p = podObject('cni-bench-agent-1', 'lab-n1', 'abcd', true);
  assert.equal(p.spec?.nodeName, 'lab-n1');
  assert.equal(p.metadata?.labels?.['app.kubernetes.io/name'], 'cni-bench-agent');
  assert.equal(p.spec?.automountServiceAccountToken, false);
  assert.deepEqual(
    [labPodName(0, 0), labPodName(0, 1), labPodName(2, 0), labPodName(2, 1)],
    ['cni-bench-agent-0', 'cni-bench-agent-peer-0', 'cni-bench-agent-2', 'lab-n2-p1'],
  );
});

test('the lab control plane: apiserver on the fabric address, kube-controller-manager allocating /24 pod CIDRs from the cluster CIDR', () => {
  const pki = {
    dir: '/d',
    caCert: '/d/ca.crt',
    caKey: '/d/ca.key',
    serverCert: '/d/s.crt',
    serverKey: '/d/s.key',
    saKey: '/d/sa.key',
    saPub: '/d/sa.pub',
  };
  const a = controlPlaneArgs(
    { dir: '/d', fabricNs: 'cnib-abcd-fab', clusterCidr: CLUSTER_CIDR, serviceCidr: '198.19.0.0/16', nodeCidrMask: 24 },
    pki,
    '/d/k',
  );
  assert.ok(inBenchmarkRange(LAB_API_IP));
  assert.ok(a.apiserver.includes(`--bind-address=${LAB_API_IP}`));
  assert.ok(a.kcm.includes('--allocate-node-cidrs=true'));
  assert.ok(a.kcm.includes(`--cluster-cidr=${CLUSTER_CIDR}`));
  assert.ok(a.kcm.includes('--node-cidr-mask-size=24'));
  assert.ok(a.kcm.some((f) => f.startsWith('--controllers=') && f.includes('node-ipam-controller')));
  assert.ok(a.etcd.every((f) => !/0\.0\.0\.0/.test(f)));
});

test('a Ready lab node loses the taints admission and the lifecycle controller manage, and keeps the others', () => {
  const notReady = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
  const own = { key: 'example.com/dedicated', value: 'x', effect: 'NoSchedule' };
  assert.deepEqual(withoutLifecycleTaints([notReady, own]), [own]);
  assert.equal(
    withoutLifecycleTaints([notReady, { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }]),
    undefined,
  );
  assert.equal(withoutLifecycleTaints(undefined), undefined);
});
