/**
 * Policy conditions in the lab on real enforcers: kube-router's policy
 * controller on an iptables lab, Cilium's agents on a cilium lab. A
 * NetworkPolicy condition is verified (a denied pod blocked, the clients
 * through) before its measurement, measured beside the baseline, and removed
 * afterwards (the revert verified by the denied pod connecting again); a
 * policy-count sweep 0/100/500 verifies enforcement at each step and reports
 * how long it took. With the enforcer stopped, the condition cannot be
 * verified: the phase fails with the reason, and the row has no value.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import type { Lab } from '../../lab/lab.js';
import type { LabProxyOptions } from '../../lab/proxy.js';
import { runInLab } from '../../lab/session.js';
import type { ReportModel } from '../../report/report.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { type LabTestRun, labTest } from '../support/helpers/lab-test.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-policy-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SHORT = {
  durationSeconds: 1,
  warmupSeconds: 0,
  rounds: 2,
  roundSleepSeconds: 0,
  measurements: [{ kind: 'rr', path: 'pod-to-pod', mode: 'crr' }],
};

function kubeRouters(): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'])
    .toString()
    .split('\n')
    .filter((l) => /kube-router --run-firewall/.test(l));
}

/** A 2-node lab with the policy enforcer runs `scenario` under labTest's logger and interrupt-trapped signal. */
async function labRun(
  run: LabTestRun,
  proxy: LabProxyOptions,
  scenario: Record<string, unknown>,
  beforeAgents?: (lab: Lab) => Promise<void>,
): Promise<{ report: ReportModel; labId: string }> {
  let labId = '';
  const report = await runInLab(
    {
      nodes: 2,
      proxy,
      policyEnforcer: true,
      dbPath: join(tmp, `${Date.now()}.db`),
      agentWaitMs: 60_000,
      beforeAgents: async (lab) => {
        labId = lab.plan.id;
        await beforeAgents?.(lab);
      },
    },
    scenario,
    run.log,
    run.signal,
  );
  assert.ok(report);
  return { report, labId };
}

function diagnostics(t: { diagnostic: (s: string) => void }, r: ReportModel): void {
  for (const s of r.conditions?.steps ?? [])
    t.diagnostic(
      `${s.action} ${s.condition}: ${s.status}; enforcement ${s.enforcementMs} ms, API ${s.apiMs} ms; ${s.how}`,
    );
  for (const row of r.conditions?.rows ?? [])
    t.diagnostic(
      `${row.measurement} [${row.condition}]: baseline ${row.baseline?.toFixed(0)} ${row.unit}, under it ${row.value?.toFixed(0) ?? '—'}, change ${row.change === null ? '—' : `${(row.change * 100).toFixed(1)}%`}, ${row.verdict ?? row.error}`,
    );
}

/** Every step verified (the apply with an enforcement time where policies exist, the revert), every row measured beside its baseline. */
function assertVerified(r: ReportModel, applies: number): void {
  const t = r.conditions;
  assert.ok(t, 'the report has an overhead table');
  const applied = t.steps.filter((s) => s.action === 'apply');
  assert.equal(applied.length, applies);
  for (const s of t.steps) assert.equal(s.status, 'succeeded', `${s.action} ${s.condition}: ${s.how}`);
  for (const s of applied.filter((x) => (x.policies ?? 0) > 0)) {
    assert.match(s.how, /is blocked .* connect/);
    assert.ok((s.enforcementMs ?? -1) >= 0, `${s.condition} has an enforcement time`);
  }
  const reverted = t.steps.filter((s) => s.action === 'revert');
  for (const s of reverted) assert.match(s.how, /policies deleted; the denied client .* connects to .* again/);
  for (const row of t.rows) {
    assert.equal(row.error, '', row.error);
    assert.ok((row.baseline ?? 0) > 0 && (row.value ?? 0) > 0, JSON.stringify(row));
    assert.ok(row.verdict, 'a verdict');
  }
}

labTest(
  'iptables lab with kube-router: a NetworkPolicy verified, measured beside its baseline, removed; a 0/100/500 policy sweep',
  1_200_000,
  async (t, run) => {
    const { report, labId } = await labRun(
      run,
      { mode: 'iptables', iptablesBackend: 'legacy' },
      { ...SHORT, name: 'policy iptables', conditions: { networkPolicy: {}, policyCount: { steps: [0, 100, 500] } } },
    );
    diagnostics(t, report);
    assert.equal(report.run.state, 'succeeded', report.run.reason);
    assertVerified(report, 4);
    assert.match(report.conditions?.steps[0]?.how ?? '', /kube-router/);
    assert.deepEqual(labNamespaces(labId), []);
    assert.deepEqual(kubeRouters(), []);
  },
);

labTest(
  'iptables lab with the enforcer stopped: the policy cannot be verified, the phase fails with the reason and no value',
  900_000,
  async (t, run) => {
    const { report } = await labRun(
      run,
      { mode: 'iptables', iptablesBackend: 'legacy' },
      { ...SHORT, rounds: 1, name: 'policy enforcer stopped', conditions: { networkPolicy: {} } },
      async (lab) => {
        for (const n of lab.plan.nodes) await lab.policy?.stopOn(n.index);
      },
    );
    diagnostics(t, report);
    assert.equal(report.run.state, 'failed');
    const apply = report.conditions?.steps.find((s) => s.action === 'apply');
    assert.equal(apply?.status, 'failed');
    assert.match(apply?.how ?? '', /policy not enforced .*the denied client lab-n1-p1 still connects/);
    const row = report.conditions?.rows[0];
    assert.equal(row?.value, null);
    assert.match(row?.error ?? '', /not verified: policy not enforced/);
    assert.equal(report.rows.find((r) => /\[networkPolicy/.test(r.measurement))?.value, null);
  },
);

labTest(
  'cilium lab: NetworkPolicy and a 0/100 sweep enforced by Cilium; L7 and encryption refused with the reasons the machine and the agents give (Hubble: lab-policy-hubble)',
  1_500_000,
  async (t, run) => {
    const { report } = await labRun(
      run,
      { mode: 'cilium' },
      {
        ...SHORT,
        name: 'policy cilium',
        conditions: { networkPolicy: {}, policyCount: { steps: [0, 100] }, l7Policy: {}, encryption: {} },
      },
    );
    diagnostics(t, report);
    const steps = report.conditions?.steps ?? [];
    const ok = steps.filter((s) => s.group === 'networkPolicy' || s.group === 'policyCount');
    for (const s of ok) assert.equal(s.status, 'succeeded', `${s.action} ${s.condition}: ${s.how}`);
    assert.match(ok[0]?.how ?? '', /enforced by Cilium/);
    const l7 = steps.find((s) => s.group === 'l7Policy' && s.action === 'apply');
    assert.equal(l7?.status, 'failed');
    assert.match(l7?.how ?? '', /no cilium-envoy build/);
    const enc = steps.find((s) => s.group === 'encryption' && s.action === 'apply');
    assert.equal(enc?.status, 'failed');
    assert.match(enc?.how ?? '', /WireGuard is absent|rfc4106/);
    for (const r of report.conditions?.rows ?? []) {
      if (r.group === 'l7Policy' || r.group === 'encryption') assert.equal(r.value, null);
      else assert.ok((r.value ?? 0) > 0 && r.verdict, JSON.stringify(r));
    }
  },
);
