/**
 * The policy condition on the nftables lab: kube-proxy in nftables mode
 * programs Services in its own `ip kube-proxy` table, and kube-router's policy
 * controller (through iptables-nft, the machine's `iptables`) puts its
 * KUBE-ROUTER chains in nftables' `ip filter` table beside it. A NetworkPolicy
 * is verified (denied pod blocked, clients through), measured beside its
 * baseline and removed; a 0/100 sweep verifies enforcement at each step.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { runInLab } from '../../lab/session.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { labTest } from '../support/helpers/lab-test.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-policy-nft-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

labTest(
  'nftables lab with kube-router (iptables-nft): a NetworkPolicy verified, measured beside its baseline, removed; a 0/100 sweep',
  1_200_000,
  async (t, { log, signal }) => {
    let labId = '';
    const tables: string[] = [];
    const report = await runInLab(
      {
        nodes: 2,
        proxy: { mode: 'nftables' },
        policyEnforcer: true,
        dbPath: join(tmp, 'nft.db'),
        agentWaitMs: 60_000,
        beforeAgents: async (lab) => {
          labId = lab.plan.id;
          for (const n of lab.plan.nodes) {
            const nft = (args: string[]) => execFileSync('ip', ['netns', 'exec', n.ns, 'nft', ...args]).toString();
            // kube-router's chain is an nftables chain (iptables-nft), beside kube-proxy's own nftables table.
            assert.match(nft(['list', 'chain', 'ip', 'filter', 'KUBE-ROUTER-FORWARD']), /chain KUBE-ROUTER-FORWARD/);
            assert.match(nft(['list', 'tables']), /table ip kube-proxy/);
            tables.push(n.name);
          }
        },
      },
      {
        name: 'policy nftables',
        durationSeconds: 1,
        warmupSeconds: 0,
        rounds: 2,
        roundSleepSeconds: 0,
        measurements: [{ kind: 'rr', path: 'pod-to-pod', mode: 'crr' }],
        conditions: { networkPolicy: {}, policyCount: { steps: [0, 100] } },
      },
      log,
      signal,
    );
    assert.ok(report);
    for (const s of report.conditions?.steps ?? [])
      t.diagnostic(`${s.action} ${s.condition}: ${s.status}; enforcement ${s.enforcementMs} ms; ${s.how}`);
    for (const r of report.conditions?.rows ?? [])
      t.diagnostic(
        `${r.measurement} [${r.condition}]: baseline ${r.baseline?.toFixed(0)}, under it ${r.value?.toFixed(0) ?? '—'}, change ${r.change === null ? '—' : `${(r.change * 100).toFixed(1)}%`}, ${r.verdict ?? r.error}`,
      );
    assert.deepEqual(tables, ['lab-n0', 'lab-n1']);
    assert.equal(report.run.state, 'succeeded', report.run.reason);
    const steps = report.conditions?.steps ?? [];
    assert.equal(steps.filter((s) => s.action === 'apply').length, 3);
    for (const s of steps) assert.equal(s.status, 'succeeded', `${s.action} ${s.condition}: ${s.how}`);
    for (const s of steps.filter((x) => x.action === 'apply' && (x.policies ?? 0) > 0)) {
      assert.match(s.how, /is blocked .* connect.*kube-router/);
      assert.ok((s.enforcementMs ?? -1) >= 0);
    }
    assert.match(steps.find((s) => s.action === 'revert')?.how ?? '', /the denied client .* connects to .* again/);
    for (const r of report.conditions?.rows ?? [])
      assert.ok(!r.error && (r.baseline ?? 0) > 0 && (r.value ?? 0) > 0 && r.verdict, JSON.stringify(r));
    assert.deepEqual(labNamespaces(labId), []);
  },
);
