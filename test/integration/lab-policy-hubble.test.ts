/**
 * Hubble on against off on the Cilium lab, for real: the agents run without
 * Hubble for the baseline (each reports Hubble Disabled and serves no
 * hubble.sock), the condition sets cilium-config's enable-hubble and rolls
 * them, and counts only once every agent reports Hubble Ok and the server
 * node's observer (ServerStatus and GetFlows on hubble.sock) has seen the
 * clients' flows to the server with its seen-flows counter moving; the
 * measurement is repeated under it beside its baseline; the revert rolls them
 * without Hubble and verifies that none reports it or serves hubble.sock.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { readCiliumFeatures } from '../../agent/observe/cilium-features.js';
import { hubbleServerStatus, hubbleSocket } from '../../agent/observe/hubble-observer.js';
import { CiliumLab } from '../../lab/cilium/dataplane.js';
import { runInLab } from '../../lab/session.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { labTest } from '../support/helpers/lab-test.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-hubble-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

labTest(
  'cilium lab: Hubble off for the baseline, on (observer sees the clients flows, seen-flows moves) for the condition, off again after',
  1_200_000,
  async (t, { log, signal }) => {
    let labId = '';
    const offBefore: string[] = [];
    const report = await runInLab(
      {
        nodes: 2,
        proxy: { mode: 'cilium' },
        dbPath: join(tmp, 'hubble.db'),
        agentWaitMs: 60_000,
        beforeAgents: async (lab) => {
          labId = lab.plan.id;
          assert.ok(lab.services instanceof CiliumLab);
          for (const a of lab.services.ciliumAgents) {
            const f = await readCiliumFeatures(a.socket);
            await assert.rejects(hubbleServerStatus(hubbleSocket(a.socket)), /hubble observer: no Hubble socket/);
            offBefore.push(`${a.nodeName}: Hubble ${f.hubble}, seen-flows ${f.seenFlows}`);
          }
        },
      },
      {
        name: 'hubble on/off',
        durationSeconds: 2,
        warmupSeconds: 0,
        rounds: 3,
        roundSleepSeconds: 0,
        measurements: [{ kind: 'rr', path: 'pod-to-pod', mode: 'crr' }],
        conditions: { hubble: {} },
      },
      log,
      signal,
    );
    assert.ok(report);
    t.diagnostic(`before: ${offBefore.join(', ')}`);
    for (const s of report.conditions?.steps ?? []) t.diagnostic(`${s.action} ${s.condition}: ${s.status}; ${s.how}`);
    for (const r of report.conditions?.rows ?? [])
      t.diagnostic(
        `${r.measurement} [${r.condition}]: baseline ${r.baseline?.toFixed(0)} ${r.unit}, under it ${r.value?.toFixed(0) ?? '—'}, change ${r.change === null ? '—' : `${(r.change * 100).toFixed(1)}%`}, ${r.verdict ?? r.error}`,
      );
    assert.deepEqual(offBefore, [
      'lab-n0: Hubble Disabled, seen-flows null',
      'lab-n1: Hubble Disabled, seen-flows null',
    ]);
    assert.equal(report.run.state, 'succeeded', report.run.reason);
    const steps = report.conditions?.steps ?? [];
    const apply = steps.find((s) => s.action === 'apply');
    assert.equal(apply?.status, 'succeeded', apply?.how);
    assert.match(apply?.how ?? '', /Hubble on in every agent \(lab-n0: Ok, lab-n1: Ok/);
    const counted = /counted (\d+) new flows and GetFlows shows (\d+) flows/.exec(apply?.how ?? '');
    assert.ok(counted && Number(counted[1]) > 0 && Number(counted[2]) > 0, apply?.how);
    const revert = steps.find((s) => s.action === 'revert');
    assert.equal(revert?.status, 'succeeded', revert?.how);
    assert.match(
      revert?.how ?? '',
      /Hubble off again: every agent reports Hubble Disabled .* none serves hubble\.sock/,
    );
    // The measured traffic itself went through the observer: far more flows by the revert than the probes made.
    const atRevert = /observer counted (\d+) flows after its verification/.exec(revert?.how ?? '');
    assert.ok(atRevert && Number(atRevert[1]) > Number(counted?.[1]), revert?.how);
    const row = report.conditions?.rows[0];
    assert.ok(row && (row.baseline ?? 0) > 0 && (row.value ?? 0) > 0 && row.verdict, JSON.stringify(row));
    assert.deepEqual(labNamespaces(labId), []);
  },
);
