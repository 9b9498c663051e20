/**
 * Where the cluster description shows: the report's Cluster line (with the
 * API's OS image and runtime) and its notes under it, and the comparison's
 * header block (one column for OS image and runtime).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterDescription } from '../../../core/cluster.js';
import { compareReports } from '../../../report/compare.js';
import { renderComparisonMarkdown } from '../../../report/compare-render.js';
import { renderMarkdown } from '../../../report/markdown.js';
import type { ReportModel } from '../../../report/report.js';

const API: ClusterDescription = {
  kubernetesVersion: 'v1.37.2',
  cni: 'flannel',
  cniMode: 'vxlan',
  kubeProxyMode: "nftables (API) / iptables (agents' rules)",
  kernel: '6.1.0-28-amd64',
  nodeType: 'm6i.large (3 nodes), c6i.xlarge (1 node)',
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  containerRuntime: 'containerd://1.7.24',
  notes: ["kube-proxy mode disagrees: the cluster's configuration says nftables, the agents' dataplane shows iptables"],
  evidence: ['configmap kube-system/kube-proxy key config.conf: mode nftables'],
};

const report = (id: string, description: ClusterDescription): ReportModel => ({
  run: { id, name: id, state: 'succeeded', reason: '', createdMs: 1, startedMs: 2, endedMs: 3 },
  cluster: { description },
  rows: [],
});

test('the report says the OS image and runtime on its Cluster line and lists the notes under it', () => {
  const text = renderMarkdown(report('a', API));
  assert.match(
    text,
    /Cluster: Kubernetes v1\.37\.2; CNI flannel \(vxlan\); kube-proxy nftables \(API\) \/ iptables \(agents' rules\); kernel 6\.1\.0-28-amd64; nodes m6i\.large \(3 nodes\), c6i\.xlarge \(1 node\); Debian GNU\/Linux 12 \(bookworm\), containerd:\/\/1\.7\.24\.\n\n- kube-proxy mode disagrees: /,
  );
  const plain = renderMarkdown(
    report('b', { ...API, notes: undefined, osImage: undefined, containerRuntime: undefined }),
  );
  assert.match(plain, /nodes m6i\.large \(3 nodes\), c6i\.xlarge \(1 node\)\.\n\n\| measurement/);
});

test('the comparison header has an OS, runtime column', () => {
  const text = renderComparisonMarkdown(
    compareReports([report('a', API), report('b', { ...API, osImage: undefined, containerRuntime: undefined })], {
      labels: ['A', 'B'],
    }),
  );
  assert.match(
    text,
    /\| column \| run \| name \| state \| kube-proxy \| CNI \| CNI mode \| kernel \| Kubernetes \| node type \| OS, runtime \|/,
  );
  assert.match(text, /\| A \(baseline\) \| a \|.*\| Debian GNU\/Linux 12 \(bookworm\), containerd:\/\/1\.7\.24 \|/);
  assert.match(text, /\| B \| b \|.*\| m6i\.large \(3 nodes\), c6i\.xlarge \(1 node\) \| — \|/);
});
