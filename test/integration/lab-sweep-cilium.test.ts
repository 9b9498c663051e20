/**
 * The Service scale sweep on real Cilium beside kube-proxy iptables, both in
 * one run of `cni-bench lab sweep` (each in its own fresh lab), at 0, 3,000
 * and 6,000 dummy Services of 4 endpoints: every step counts only when every
 * node's dataplane holds it (KUBE-SERVICES rules; Cilium LB frontends with all
 * their backends, read from each node's bpffs), with its programming latency
 * measured by polling. The study's finding is asserted as ratios within each
 * run: iptables' short-connection RPS falls significantly against its own step
 * 0 (the O(n) KUBE-SERVICES walk), Cilium's stays within noise of its own step
 * 0 (one BPF hash lookup). Nothing of either lab is left.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Comparison } from '../../report/significance.js';
import { ciliumLeftovers, NOTHING_LEFT } from '../support/helpers/cilium-state.js';
import { addedRootLinks, rootLinks } from '../support/helpers/host-state.js';
import {
  assertSweepSucceeded,
  logVerdicts,
  runLabSweep,
  shortConnectionVerdict,
} from '../support/helpers/lab-sweep.js';
import { notLong } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-sweep-cilium-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('lab sweep: iptables falls with the Services ahead, Cilium stays within noise of its own step 0, in one run', {
  skip: notLong,
  // About 10 minutes on a quiet machine; on 2 cores shared with other labs (load 40+) it took over 20.
  timeout: 2_400_000,
}, async (t) => {
  const links = rootLinks();
  const steps = [0, 3000, 6000];
  const rounds = 5;
  const p = await runLabSweep('iptables,cilium', steps, rounds, join(tmp, 'lab.db'));
  for (const id of p.labIds) assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT, `lab ${id}`);
  assert.deepEqual(addedRootLinks(links), [], 'no root-namespace link left by this run');
  assert.equal(p.code, 0, p.output.slice(-6000));
  assert.equal([...p.output.matchAll(/"msg":"lab created"/g)].length, 2, 'one fresh lab per dataplane');
  const out = JSON.parse(p.stdout);
  for (const { mode, report } of out.runs)
    for (const st of report.sweep.steps)
      t.diagnostic(
        `${mode} @${st.services}: programming ${st.programmingMs} ms, latency ${st.programmingLatencyMs} ms (-${st.latencyResolutionMs}), sync ${st.syncMs} ms, KUBE-SERVICES ${st.kubeServicesRules}, Cilium frontends ${st.ciliumFrontends}`,
      );
  assertSweepSucceeded(out, ['iptables (legacy)', 'cilium'], steps);
  const verdicts = new Map<string, Comparison>();
  for (const { mode, report } of out.runs) {
    for (const st of report.sweep.steps) {
      // Programming latency: at least the writes, at most writes + sync; the resolution within it.
      assert.ok(st.programmingLatencyMs >= st.programmingMs, JSON.stringify(st));
      assert.ok(st.programmingLatencyMs <= st.programmingMs + st.syncMs + 1000, JSON.stringify(st));
      assert.ok(st.latencyResolutionMs > 0 && st.latencyResolutionMs <= st.programmingLatencyMs, JSON.stringify(st));
      // The dataplane itself held the step on every node (the fewest of all nodes).
      if (mode === 'cilium') assert.ok(st.ciliumFrontends >= st.services, `${mode} ${JSON.stringify(st)}`);
      else assert.ok(st.kubeServicesRules >= st.services + 1, `${mode} ${JSON.stringify(st)}`);
    }
    const measured = report.rows.filter((r: any) => r.path === 'service');
    assert.equal(measured.length, steps.length * 3);
    for (const r of measured) assert.equal(r.status, 'succeeded', `${mode} ${r.measurement}: ${r.error}`);
    verdicts.set(mode, shortConnectionVerdict(t, mode, measured, 6000));
  }
  logVerdicts(t, verdicts);
  const ipt = verdicts.get('iptables (legacy)');
  const cil = verdicts.get('cilium');
  assert.equal(ipt?.verdict, 'worse', `iptables: ${ipt?.reason}`);
  assert.equal(cil?.verdict, 'within noise', `cilium: ${cil?.reason}`);
  // Both dataplanes' latencies side by side in the comparison, and a sentence on where the curves cross.
  assert.equal(out.comparison.latency.length, 2);
  for (const l of out.comparison.latency) assert.ok(l.latencyMs.every((v: number | null) => v !== null && v > 0));
  for (const s of out.comparison.series) assert.match(s.crossovers[0].text, /overtakes|is ahead of|within noise/);
});
