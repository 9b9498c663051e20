/**
 * What a run says about the cluster it measured: operator labels win, then
 * what the frontend knows, then detection from the agents' dataplane; nothing
 * undetected is guessed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AgentEntry } from '../../collector/agents/registry.js';
import { describeCluster } from '../../collector/runs/cluster-description.js';
import { Dataplane } from '../../gen/cnibench/v1/agent.js';

const agent = (dataplane: Partial<Dataplane> | undefined, labels: Record<string, string> = {}): AgentEntry =>
  ({ id: 'n', info: { kernel: '6.1.0', cpus: 2, labels, dataplane: dataplane ? Dataplane.fromPartial(dataplane) : undefined } }) as unknown as AgentEntry;

test('kube-proxy mode is detected from the node: its nftables table, else KUBE-SERVICES, else unknown', () => {
  const mode = (d: Partial<Dataplane> | undefined) => describeCluster({ server: agent(d), client: agent(d) }).kubeProxyMode;
  assert.equal(mode({ kubeProxyNftables: true, nftables: true }), 'nftables');
  assert.equal(mode({ kubeServices: true, kubeServicesRules: 12 }), 'iptables');
  assert.equal(mode({ bpfMapCount: 40 }), 'none (eBPF service handling?)');
  assert.equal(mode({}), 'unknown');
  assert.equal(mode(undefined), 'unknown');
});

test('operator labels win over the frontend, and the frontend over detection', () => {
  const d = { kubeServices: true, kubeServicesRules: 3 };
  const labelled = agent(d, { 'cni-bench.io/kube-proxy-mode': 'ipvs', 'cni-bench.io/cni': 'cilium 1.19' });
  const desc = describeCluster({ server: labelled, client: agent(d) }, { kubernetesVersion: 'v1.37.2', cni: 'calico', nodeType: 'm6i.large' });
  assert.deepEqual(desc, { kubernetesVersion: 'v1.37.2', cni: 'cilium 1.19', cniMode: '', kubeProxyMode: 'ipvs', kernel: '6.1.0', nodeType: 'm6i.large' });
});
