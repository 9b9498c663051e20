/**
 * The Service scale sweep end to end in the lab, both kube-proxy modes, with
 * small steps: every step is programmed into the real kernel (iptables-legacy
 * and nft), each node's agent sample shows it before anything is measured,
 * the measurements go through the fronting Service, and nothing is left
 * behind. The study's finding is asserted as ratios within each run, so a
 * slow or busy machine moves both sides alike: with 6,000 Services of 4
 * endpoints ahead of it, short-connection RPS through iptables' O(n)
 * KUBE-SERVICES walk falls against its own step 0 (significant, and more than
 * the 15% noise floor of 1 s rounds on 2 shared cores), while nftables' one
 * map lookup stays within noise of its own step 0.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Comparison } from '../../report/significance.js';
import { NO_LEFTOVERS, ownLabLeftovers, rootLinks, rootRules } from '../support/helpers/host-state.js';
import {
  assertSweepSucceeded,
  logVerdicts,
  runLabSweep,
  shortConnectionVerdict,
} from '../support/helpers/lab-sweep.js';
import { notRoot } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-sweep-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('lab sweep: iptables and nftables modes, steps verified on every node, compared', {
  skip: notRoot,
  timeout: 900_000,
}, async (t) => {
  const links = rootLinks();
  const rules = rootRules();
  const steps = [0, 3000, 6000];
  const rounds = 5;
  // The two kube-proxy modes (the sweep's default adds Cilium: lab-sweep-cilium.test.ts covers it).
  const p = await runLabSweep('iptables,nftables', steps, rounds, join(tmp, 'lab.db'));
  assert.equal(p.code, 0, p.output);
  const out = JSON.parse(p.stdout);
  const verdicts = new Map<string, Comparison>();
  assertSweepSucceeded(out, ['iptables (legacy)', 'nftables'], steps);
  for (const { mode, report } of out.runs) {
    for (const st of report.sweep.steps) {
      assert.ok(st.programmingMs >= 0 && st.syncMs >= 0, JSON.stringify(st));
      // One fronting Service (http-echo) exists from the first measurement on; the step-0 scale phase runs before it.
      if (mode === 'nftables') assert.ok(st.nftServiceIps >= st.services, `${mode} ${JSON.stringify(st)}`);
      else assert.ok(st.kubeServicesRules >= st.services + 1, `${mode} ${JSON.stringify(st)}`);
    }
    // Keep-alive RPS, short-connection RPS and TCP_CRR at every step.
    assert.equal(report.sweep.series.length, 3);
    for (const s of report.sweep.series)
      assert.ok(
        s.values.every((v: number | null) => v !== null && v > 0),
        `${mode} ${s.label}: ${s.values}`,
      );
    const measured = report.rows.filter((r: any) => r.path === 'service');
    assert.equal(measured.length, steps.length * 3);
    assert.ok(
      measured.every((r: any) => r.rounds === rounds),
      `${rounds} rounds per measurement`,
    );
    for (const r of measured) {
      if (mode === 'nftables') assert.equal(r.dnatConnections, null, 'nftables mode has no per-rule counters');
      else assert.ok(r.dnatConnections > 0, `${r.measurement} did not cross the DNAT rules`);
    }
    assert.equal(report.cluster.client.dataplane.iptablesBackend, mode === 'nftables' ? 'nft' : 'legacy');
    verdicts.set(mode, shortConnectionVerdict(t, mode, measured, steps[steps.length - 1] as number));
  }
  logVerdicts(t, verdicts);
  const ipt = verdicts.get('iptables (legacy)');
  const nft = verdicts.get('nftables');
  assert.equal(ipt?.verdict, 'worse', `iptables: ${ipt?.reason}`);
  assert.equal(nft?.verdict, 'within noise', `nftables: ${nft?.reason}`);
  // And the gap between the modes is itself clear: iptables keeps less of its step-0 rate than nftables by 10 points or more.
  assert.ok(
    (1 + (ipt?.relDiff ?? 0)) / (1 + (nft?.relDiff ?? 0)) < 0.9,
    `iptables kept ${((1 + (ipt?.relDiff ?? 0)) * 100).toFixed(0)}%, nftables ${((1 + (nft?.relDiff ?? 0)) * 100).toFixed(0)}%`,
  );
  assert.equal(out.comparison.steps.length, steps.length);
  for (const s of out.comparison.series) assert.match(s.crossovers[0].text, /overtakes|is ahead of|within noise/);
  // Its own labs only (one per mode): another checkout's lab may be running beside it.
  assert.equal(p.labIds.length, 2, 'one fresh lab per mode');
  for (const id of p.labIds)
    assert.deepEqual(ownLabLeftovers(id, { anyLoadGenerator: true }), NO_LEFTOVERS, `lab ${id}`);
  assert.equal(rootLinks(), links);
  assert.equal(rootRules(), rules);
});
