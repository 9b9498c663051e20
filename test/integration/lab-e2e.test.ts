/**
 * The lab end to end: three lab nodes, the default scenario with short
 * durations, real iperf3/wrk through real kernel datapaths. Numbers must be
 * positive, the Service rows must have crossed kube-proxy's DNAT rules (and the
 * pod-to-pod rows must not), and nothing may be left behind.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { labNamespaces, labProcesses, labStateFiles, rootLinks, rootRules } from '../helpers/host-state.js';
import { CLI_MAIN, startNode } from '../helpers/procs.js';
import { notRoot } from '../helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-lab-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('the default scenario runs on a 3-node lab and proves its Service path', { skip: notRoot, timeout: 300_000 }, async () => {
  const links = rootLinks();
  const rules = rootRules();
  const lab = startNode(CLI_MAIN, ['lab', '--nodes', '3', '--duration', '1', '--warmup', '0.5', '--json', '--db', join(tmp, 'lab.db')]);
  const code = await lab.exited;
  const out = lab.output();
  assert.equal(code, 0, out);
  const report = JSON.parse(lab.stdout());
  assert.equal(report.run.state, 'succeeded');
  assert.equal(report.rows.length, 6);
  for (const row of report.rows) {
    assert.equal(row.status, 'succeeded', JSON.stringify(row));
    assert.ok(row.value > 0, `${row.measurement}: ${row.value}`);
    assert.ok(row.dnatConnections !== null, `${row.measurement}: no dataplane samples around the phase`);
    if (row.path === 'service') assert.ok(row.dnatConnections > 0, `${row.measurement} did not cross the DNAT rules`);
    else assert.equal(row.dnatConnections, 0, `${row.measurement} should not touch the Service rules`);
  }
  const sc = report.rows.find((r: any) => r.id === 'http-sc-service-c64');
  assert.equal(sc.details.keepalive, false);
  // Short connections open a connection per request: DNAT count tracks the request count.
  assert.ok(sc.dnatConnections >= sc.details.requests * 0.9, `${sc.dnatConnections} DNATs for ${sc.details.requests} requests`);
  assert.equal(report.cluster.server.node, 'lab-n0');
  assert.equal(report.cluster.client.node, 'lab-n1');
  assert.equal(report.cluster.client.dataplane.kubeServices, true);
  assert.deepEqual(labNamespaces(), []);
  assert.deepEqual(labProcesses(), []);
  assert.deepEqual(labStateFiles(), []);
  assert.equal(rootLinks(), links);
  assert.equal(rootRules(), rules);
});
