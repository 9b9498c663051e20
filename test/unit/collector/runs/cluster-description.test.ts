/**
 * What a run says about the cluster it measured: operator labels win, then
 * what the frontend knows, then detection from the agents' dataplane; nothing
 * undetected is guessed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AgentEntry } from '../../../../collector/agents/registry.js';
import { describeCluster } from '../../../../collector/runs/cluster-description.js';
import { Dataplane } from '../../../../gen/cnibench/v1/agent.js';

const agent = (dataplane: Partial<Dataplane> | undefined, labels: Record<string, string> = {}): AgentEntry =>
  ({
    id: 'n',
    info: { kernel: '6.1.0', cpus: 2, labels, dataplane: dataplane ? Dataplane.fromPartial(dataplane) : undefined },
  }) as unknown as AgentEntry;

test('kube-proxy mode is detected from the node: its nftables table, else KUBE-SERVICES, else unknown', () => {
  const mode = (d: Partial<Dataplane> | undefined) =>
    describeCluster({ server: agent(d), client: agent(d) }).kubeProxyMode;
  assert.equal(mode({ kubeProxyNftables: true, nftables: true }), 'nftables');
  assert.equal(mode({ kubeServices: true, kubeServicesRules: 12 }), 'iptables');
  assert.equal(mode({ bpfMapCount: 40 }), 'none (eBPF service handling?)');
  assert.equal(mode({}), 'unknown');
  assert.equal(mode(undefined), 'unknown');
});

test('operator labels win over the frontend, and the frontend over detection', () => {
  const d = { kubeServices: true, kubeServicesRules: 3 };
  const labelled = agent(d, { 'cni-bench.io/kube-proxy-mode': 'ipvs', 'cni-bench.io/cni': 'cilium 1.19' });
  const desc = describeCluster(
    { server: labelled, client: agent(d) },
    { kubernetesVersion: 'v1.37.2', cni: 'calico', nodeType: 'm6i.large' },
  );
  assert.deepEqual(desc, {
    kubernetesVersion: 'v1.37.2',
    cni: 'cilium 1.19',
    cniMode: '',
    kubeProxyMode: 'ipvs',
    kernel: '6.1.0',
    nodeType: 'm6i.large',
  });
});

test("the API-detected kube-proxy mode against the agents' rules: agreement keeps it, disagreement says both", () => {
  const nft = { kubeProxyNftables: true, nftables: true };
  const ipt = { kubeServices: true, kubeServicesRules: 12 };
  const api = (kubeProxyMode: string) => ({
    kubernetesVersion: 'v1.37.2',
    kubeProxyMode,
    notes: ['from the API'],
    evidence: ['configmap kube-system/kube-proxy key config.conf: mode nftables'],
  });
  const agree = describeCluster({ server: agent(nft), client: agent(nft) }, api('nftables'));
  assert.equal(agree.kubeProxyMode, 'nftables');
  assert.deepEqual(agree.notes, ['from the API']);
  assert.deepEqual(agree.evidence, ['configmap kube-system/kube-proxy key config.conf: mode nftables']);
  const differ = describeCluster({ server: agent(ipt), client: agent(ipt) }, api('nftables'));
  assert.equal(differ.kubeProxyMode, "nftables (API) / iptables (agents' rules)");
  assert.deepEqual(differ.notes, [
    'from the API',
    "kube-proxy mode disagrees: the cluster's configuration says nftables, the agents' dataplane shows iptables",
  ]);
  // Agents that see nothing do not contradict; IPVS mode writes KUBE-SERVICES too; a label still wins, without a note.
  assert.equal(
    describeCluster({ server: agent({}), client: agent(undefined) }, api('nftables')).kubeProxyMode,
    'nftables',
  );
  assert.equal(describeCluster({ server: agent(ipt), client: agent(ipt) }, api('ipvs')).kubeProxyMode, 'ipvs');
  const labelled = describeCluster(
    { server: agent(ipt, { 'cni-bench.io/kube-proxy-mode': 'nftables' }), client: agent(ipt) },
    api('nftables'),
  );
  assert.deepEqual([labelled.kubeProxyMode, labelled.notes], ['nftables', ['from the API']]);
  // kube-proxy replaced by Cilium, yet the agents find kube-proxy's rules: said, not hidden.
  assert.equal(
    describeCluster({ server: agent(ipt), client: agent(ipt) }, api('none (Cilium kube-proxy replacement)'))
      .kubeProxyMode,
    "none (Cilium kube-proxy replacement) (API) / iptables (agents' rules)",
  );
});

test("OS image and runtime come from the API; the kernel from the run's agents, else the API's", () => {
  const frontend = {
    kernel: '6.8.0 (2 nodes), 6.1.0 (1 node)',
    osImage: 'Ubuntu 24.04.1 LTS',
    containerRuntime: 'containerd://2.0.1',
  };
  const d = describeCluster({ server: agent({}), client: agent({}) }, frontend);
  assert.deepEqual([d.kernel, d.osImage, d.containerRuntime], ['6.1.0', 'Ubuntu 24.04.1 LTS', 'containerd://2.0.1']);
  const noKernel = {
    id: 'n',
    info: { kernel: '', cpus: 2, labels: {}, dataplane: undefined },
  } as unknown as AgentEntry;
  assert.equal(describeCluster({ server: noKernel, client: noKernel }, frontend).kernel, frontend.kernel);
});

test("Cilium's version comes from the nodes' cilium-agents; differing versions and a disagreeing agent are notes", () => {
  const cilium = (version: string, routing = 'Native', kpr = 'True') => ({
    cilium: {
      version,
      versionFull: `${version} go-module-proxy 2026-09-15T20:03:11Z`,
      kubeProxyReplacement: kpr,
      routing,
      tunnelProtocol: routing === 'Native' ? '' : 'vxlan',
      socket: '/proc/7/root/run/cilium/cilium.sock',
      agentPid: 7,
    },
  });
  const named = (id: string, d: Partial<Dataplane>) => ({ ...agent(d), id }) as AgentEntry;
  const api = {
    cni: 'cilium',
    cniMode: 'native routing',
    kubeProxyMode: 'none (Cilium kube-proxy replacement)',
    evidence: ['kube-system/cilium-config routing-mode=native'],
  };
  const same = describeCluster({ server: named('n0', cilium('1.20.2')), client: named('n1', cilium('1.20.2')) }, api);
  assert.equal(same.cni, 'cilium 1.20.2');
  assert.equal(same.kubeProxyMode, 'none (Cilium kube-proxy replacement)');
  assert.equal(same.notes, undefined);
  assert.equal(same.evidence?.length, 3);
  assert.match(same.evidence?.[1] ?? '', /^n0: cilium-agent \(pid 7\) GET \/v1\/debuginfo .*cilium-version "1\.20\.2 /);
  const mixed = describeCluster(
    { server: named('n0', cilium('1.20.2')), client: named('n1', cilium('1.19.4', 'Tunnel', 'False')) },
    api,
  );
  assert.equal(mixed.cni, 'cilium 1.20.2 / 1.19.4');
  assert.deepEqual(mixed.notes, [
    'n1: cilium-config replaces kube-proxy, yet its cilium-agent reports kube-proxy-replacement False',
    'n1: cilium-config says native routing, its cilium-agent reports routing Tunnel',
    'cilium-agent versions differ between nodes: 1.20.2, 1.19.4',
  ]);
  // cilium-config read, no agent reached its cilium-agent: no version, and a note saying so.
  const unread = describeCluster({ server: named('n0', {}), client: named('n1', {}) }, api);
  assert.equal(unread.cni, 'cilium');
  assert.deepEqual(unread.notes, ["Cilium version not read: no agent reached its node's cilium-agent API (n0, n1)"]);
  // No cilium-config (or not readable), agents that see a cilium-agent: Cilium with its version.
  assert.equal(
    describeCluster({ server: named('n0', cilium('1.20.2')), client: named('n1', {}) }).cni,
    'cilium 1.20.2',
  );
  // An operator label still wins.
  const labelled = {
    ...agent({ ...cilium('1.20.2') }, { 'cni-bench.io/cni': 'cilium (labelled)' }),
    id: 'n0',
  } as AgentEntry;
  assert.equal(describeCluster({ server: labelled, client: labelled }, api).cni, 'cilium (labelled)');
});
