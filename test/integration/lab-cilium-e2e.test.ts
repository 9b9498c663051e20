/**
 * `cni-bench lab --dataplane cilium|cilium-vxlan` end to end through the real
 * CLI: the lab's control plane, a real cilium-agent per node, pods wired by
 * cilium-cni, the default scenario with short rounds, and the report's Cluster
 * line as the collector detected it from the lab's apiserver (cilium-config,
 * Nodes, /version) and the agents from each node's cilium-agent API (its
 * version), never a label the lab typed. While it runs, each node's
 * agent is asked (cilium-dbg, through its socket) what it really does. Then
 * nothing of Cilium is left (namespaces, processes, mounts, cgroups, run
 * directory, state file, the programs it attached, root links).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CILIUM_VERSION, ciliumBuild } from '../../lab/k8s/tools.js';
import {
  agentSocket,
  attachedPrograms,
  ciliumLeftovers,
  labIdOfPid,
  liveProgramIds,
  NOTHING_LEFT,
} from '../support/helpers/cilium-state.js';
import { rootLinks } from '../support/helpers/host-state.js';
import { CLI_MAIN, startNode, waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-cilium-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const EXPECT = {
  cilium: { routing: /Routing:\s+Network: Native/, cniMode: 'native routing' },
  'cilium-vxlan': { routing: /Routing:\s+Network: Tunnel \[vxlan\]/, cniMode: 'vxlan tunnel' },
} as const;

for (const dataplane of ['cilium', 'cilium-vxlan'] as const) {
  test(`lab --dataplane ${dataplane}: the default scenario on real Cilium, the Cluster line detected from the apiserver, nothing left`, {
    skip: notRoot,
    timeout: 900_000,
  }, async () => {
    const links = rootLinks();
    const env = {
      ROUNDS: '1',
      ROUND_SLEEP: '0',
      IPERF_DURATION: '1',
      FORTIO_DURATION: '1',
      CNI_BENCH_LOG_LEVEL: 'info',
    };
    const lab = startNode(
      CLI_MAIN,
      [
        'lab',
        '--dataplane',
        dataplane,
        '--nodes',
        '2',
        '--warmup',
        '0',
        '--duration',
        '1',
        '--json',
        '--db',
        join(tmp, `${dataplane}.db`),
      ],
      env,
    );
    const id = await waitFor('the lab state file', () => labIdOfPid(lab.child.pid ?? -1), 60_000, 100);
    // Once the run started, every node's agent is up: ask them what they do.
    await waitFor(
      'the run to start',
      () => /"msg":"run started"/.test(lab.output()) || lab.child.exitCode !== null,
      600_000,
      500,
    );
    const programs: number[] = [];
    if (lab.child.exitCode === null) {
      for (const node of [0, 1]) {
        const status = execFileSync(ciliumBuild().dbg, ['-H', `unix://${agentSocket(id, node)}`, 'status']).toString();
        assert.match(status, /KubeProxyReplacement:\s+True/, status);
        assert.match(status, EXPECT[dataplane].routing, status);
        const attached = attachedPrograms(id, node);
        assert.ok(attached.devices.includes('cilium_host'), `node ${node}: ${attached.devices.join(',')}`);
        programs.push(...attached.cgroup);
      }
      assert.ok(programs.length > 0, 'Cilium attached programs to the nodes');
    }
    const code = await lab.exited;
    const out = lab.output();
    assert.equal(code, 0, out.slice(-6000));
    const report = JSON.parse(lab.stdout());
    assert.equal(report.run.state, 'succeeded');
    const d = report.cluster.description;
    // The version as each node's cilium-agent reports it through its API socket (never typed by the lab).
    assert.equal(d.cni, `cilium ${CILIUM_VERSION.slice(1)}`);
    assert.equal(
      d.evidence.filter((e: string) =>
        /cilium-agent \(pid \d+\) GET \/v1\/debuginfo .*cilium-version "1\.20\.2 /.test(e),
      ).length,
      2,
      d.evidence.join('\n'),
    );
    assert.equal(d.cniMode, EXPECT[dataplane].cniMode);
    assert.equal(d.kubeProxyMode, 'none (Cilium kube-proxy replacement)');
    assert.equal(d.kubernetesVersion, 'v1.37.2');
    for (const row of report.rows) assert.equal(row.status, 'succeeded', JSON.stringify(row).slice(0, 2000));
    assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
    assert.deepEqual(liveProgramIds(programs), []);
    assert.equal(rootLinks(), links);
  });
}
