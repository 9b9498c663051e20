/**
 * The Service scale sweep end to end in the lab, both kube-proxy modes, with
 * small steps: every step is programmed into the real kernel (iptables-legacy
 * and nft), each node's agent sample shows it before anything is measured,
 * the measurements go through the fronting Service, and nothing is left
 * behind. Rates are printed by the benchmark, not asserted here.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { labNamespaces, labProcesses, labStateFiles, rootLinks, rootRules } from '../helpers/host-state.js';
import { CLI_MAIN, startNode } from '../helpers/procs.js';
import { notRoot } from '../helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-sweep-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('lab sweep: iptables and nftables modes, steps verified on every node, compared', { skip: notRoot, timeout: 600_000 }, async () => {
  const links = rootLinks();
  const rules = rootRules();
  const steps = [0, 300, 1000];
  const p = startNode(CLI_MAIN, ['lab', 'sweep', '--steps', steps.join(','), '--endpoints', '2', '--duration', '1', '--warmup', '0.3', '--rounds', '2', '--json', '--db', join(tmp, 'lab.db')]);
  const code = await p.exited;
  assert.equal(code, 0, p.output());
  const out = JSON.parse(p.stdout());
  assert.deepEqual(out.runs.map((r: any) => r.mode), ['iptables (legacy)', 'nftables']);
  for (const { mode, report } of out.runs) {
    assert.equal(report.run.state, 'succeeded', mode);
    assert.deepEqual(report.sweep.steps.map((s: any) => s.services), steps);
    for (const st of report.sweep.steps) {
      assert.equal(st.status, 'succeeded');
      assert.ok(st.programmingMs >= 0 && st.syncMs >= 0, JSON.stringify(st));
      // One fronting Service (http-echo) exists from the first measurement on; the step-0 scale phase runs before it.
      if (mode === 'nftables') assert.ok(st.nftServiceIps >= st.services, `${mode} ${JSON.stringify(st)}`);
      else assert.ok(st.kubeServicesRules >= st.services + 1, `${mode} ${JSON.stringify(st)}`);
    }
    // Keep-alive RPS, short-connection RPS and TCP_CRR at every step.
    assert.equal(report.sweep.series.length, 3);
    for (const s of report.sweep.series) assert.ok(s.values.every((v: number | null) => v !== null && v > 0), `${mode} ${s.label}: ${s.values}`);
    const measured = report.rows.filter((r: any) => r.path === 'service');
    assert.equal(measured.length, steps.length * 3);
    assert.ok(measured.every((r: any) => r.rounds === 2), 'two rounds per measurement');
    for (const r of measured) {
      if (mode === 'nftables') assert.equal(r.dnatConnections, null, 'nftables mode has no per-rule counters');
      else assert.ok(r.dnatConnections > 0, `${r.measurement} did not cross the DNAT rules`);
    }
    assert.equal(report.cluster.client.dataplane.iptablesBackend, mode === 'nftables' ? 'nft' : 'legacy');
  }
  assert.equal(out.comparison.steps.length, steps.length);
  for (const s of out.comparison.series) assert.match(s.crossovers[0].text, /overtakes|is ahead of|within noise/);
  assert.deepEqual(labNamespaces(), []);
  assert.deepEqual(labProcesses(), []);
  assert.deepEqual(labStateFiles(), []);
  assert.equal(rootLinks(), links);
  assert.equal(rootRules(), rules);
});
