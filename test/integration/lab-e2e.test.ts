/**
 * The lab end to end: three lab nodes, the study's whole default matrix with
 * short rounds (the study's ROUNDS/IPERF_DURATION/FORTIO_DURATION knobs set
 * through the environment), real iperf3/wrk/fortio/sockperf and the built-in
 * tcp-rr through real kernel datapaths. Every row must succeed with a positive
 * number and a confidence interval, the Service rows must have crossed
 * kube-proxy's DNAT rules (and no other row may), and nothing may be left behind.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseScenario } from '../../collector/runs/scenario.js';
import { labNamespaces, labProcesses, labStateFiles, rootLinks, rootRules } from '../support/helpers/host-state.js';
import { CLI_MAIN, startNode } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-lab-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('the whole default matrix runs on a 3-node lab with intervals and proves its Service path', {
  skip: notRoot,
  timeout: 600_000,
}, async () => {
  const links = rootLinks();
  const rules = rootRules();
  const env = { ROUNDS: '2', ROUND_SLEEP: '0.2', IPERF_DURATION: '1', FORTIO_DURATION: '1' };
  const lab = startNode(CLI_MAIN, ['lab', '--nodes', '3', '--warmup', '0', '--json', '--db', join(tmp, 'lab.db')], env);
  const code = await lab.exited;
  const out = lab.output();
  assert.equal(code, 0, out);
  const report = JSON.parse(lab.stdout());
  assert.equal(report.run.state, 'succeeded');
  assert.equal(
    report.rows.length,
    parseScenario({}).measurements.length,
    'every default measurement ran (none skipped)',
  );
  assert.deepEqual(report.cluster.skipped, []);
  for (const row of report.rows) {
    assert.equal(row.status, 'succeeded', JSON.stringify(row));
    assert.ok(row.value > 0, `${row.measurement}: ${row.value}`);
    assert.equal(row.rounds, 2, row.measurement);
    assert.ok(row.metrics[0].summary.ci95, `${row.measurement}: no interval`);
    assert.ok(Array.isArray(row.warnings));
    assert.ok(row.dnatConnections !== null, `${row.measurement}: no dataplane samples around the phase`);
    if (row.path === 'service') assert.ok(row.dnatConnections > 0, `${row.measurement} did not cross the DNAT rules`);
    else assert.equal(row.dnatConnections, 0, `${row.measurement} should not touch the Service rules`);
    // The lab's links are 1500 bytes end to end: DF pings after the tool find it (a Service's toward its backend).
    assert.deepEqual([row.pathMtu?.effectiveMtu, row.pathMtu?.blackHole], [1500, false], JSON.stringify(row.pathMtu));
  }
  const tools = new Set(report.rows.map((r: any) => r.tool));
  for (const t of ['iperf3', 'wrk', 'fortio', 'http-open-loop'])
    assert.ok(tools.has(t), `${t} used (${[...tools].join(', ')})`);
  // TCP_RR and TCP_CRR: netperf where the machine has it (the image does), else sockperf and the built-in tcp-rr.
  if (!tools.has('netperf'))
    for (const t of ['sockperf', 'tcp-rr']) assert.ok(tools.has(t), `${t} used (${[...tools].join(', ')})`);
  const rr = report.rows.find((r: any) => r.id === 'rr-pod-to-pod');
  // netperf prints percentiles up to p99 only; the report does not extrapolate beyond what the tool printed.
  // Then the CPU the row cost per 1,000 transactions (report/cpu-cost.ts).
  assert.deepEqual(
    rr.metrics.map((m: any) => m.name),
    rr.tool.startsWith('netperf')
      ? ['p50', 'p90', 'p99', 'tps', 'cpu-per-1k']
      : ['p50', 'p90', 'p99', 'p99.9', 'tps', 'cpu-per-1k'],
  );
  assert.equal(rr.metrics[0].source, 'merged-histogram');
  const fixed = report.rows.find((r: any) => r.id === 'http-qps1000-service-c16');
  assert.equal(fixed.details.targetQps, 1000);
  const open = report.rows.find((r: any) => r.id === 'http-qps1000-service-c16-open-loop');
  assert.equal(open.details.targetQps, 1000);
  assert.equal(open.metrics[0].name, 'p50');
  assert.equal(report.cluster.description.kubeProxyMode, 'iptables (legacy)');
  const sc = report.rows.find((r: any) => r.id === 'http-sc-service-c64');
  assert.equal(sc.details.keepalive, false);
  // Short connections open a connection per request: DNAT count tracks the request count.
  assert.ok(
    sc.dnatConnections >= sc.details.requests * 0.9,
    `${sc.dnatConnections} DNATs for ${sc.details.requests} requests`,
  );
  assert.equal(report.cluster.server.node, 'lab-n0');
  assert.equal(report.cluster.client.node, 'lab-n1');
  assert.equal(report.cluster.client.dataplane.kubeServices, true);
  assert.deepEqual(labNamespaces(), []);
  assert.deepEqual(labProcesses(), []);
  assert.deepEqual(labStateFiles(), []);
  assert.equal(rootLinks(), links);
  assert.equal(rootRules(), rules);
});
