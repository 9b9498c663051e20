/**
 * A PMTU black hole on Cilium's VXLAN path, flagged inside a run: the lab's
 * underlay (the fabric bridge's port toward the server's node) is narrowed to
 * 1400 bytes while Cilium still lets pods send 1450 (1500 minus the 50-byte
 * VXLAN header: its route in the pod), so a full-size pod packet becomes a 1500-byte outer packet that the
 * bridge drops without a word (an L2 hop sends no ICMP; Linux's VXLAN sends
 * outer packets without DF, so no router would either), and ICMP
 * fragmentation-needed is dropped in both nodes for good measure. The run's
 * pod-to-pod row (1-byte TCP_RR, which small packets carry) must come back with
 * a path MTU of about 1350 (1400 minus the header) against the pod's 1450+, flagged as
 * a black hole, and the Markdown report must say so.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { trapInterrupts } from '../../core/interrupts.js';
import { createLogger } from '../../core/log.js';
import { runInLab } from '../../lab/session.js';
import { renderPathMtu } from '../../report/path-mtu-render.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { notRoot } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-pmtu-vxlan-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('PMTU black hole on the cilium-vxlan path (underlay narrower than the pods claim) is flagged in the run', {
  skip: notRoot,
  timeout: 900_000,
}, async (t) => {
  const log = createLogger({ component: 'test' }, 'warn');
  const interrupts = trapInterrupts(log);
  let labId = '';
  try {
    const report = await runInLab(
      {
        nodes: 2,
        proxy: { mode: 'cilium-vxlan' },
        dbPath: join(tmp, 'lab.db'),
        agentWaitMs: 120_000,
        beforeAgents: async (lab) => {
          labId = lab.plan.id;
          const server = lab.plan.nodes[0];
          assert.ok(server);
          execFileSync('ip', ['-n', lab.plan.fabricNs, 'link', 'set', 'dev', `n${server.index}`, 'mtu', '1400']);
          for (const n of lab.plan.nodes)
            execFileSync('ip', [
              'netns',
              'exec',
              n.ns,
              'iptables',
              '-I',
              'OUTPUT',
              '-p',
              'icmp',
              '--icmp-type',
              'fragmentation-needed',
              '-j',
              'DROP',
            ]);
        },
      },
      {
        name: 'pmtu black hole on vxlan',
        rounds: 1,
        durationSeconds: 2,
        warmupSeconds: 0,
        cpuBaselineSeconds: 0,
        measurements: [{ id: 'rr-pod', kind: 'rr', path: 'pod-to-pod', tool: 'tcp-rr' }],
      },
      log,
      interrupts.signal,
    );
    assert.ok(report);
    const row = report.rows.find((r) => r.path === 'pod-to-pod');
    t.diagnostic(JSON.stringify(row?.pathMtu));
    assert.ok(row?.pathMtu, `the row measured its path MTU: ${JSON.stringify(report.rows.map((r) => r.error))}`);
    // The pod's interface says 1500 and Cilium's route in the pod 1450 (docs/pmtu.md): either way more than the path carries.
    assert.ok(row.pathMtu.localMtu >= 1450, `the pod may send ${row.pathMtu.localMtu}`);
    // 1400 minus VXLAN's 50, plus the 4 bytes a Linux bridge port lets through over its MTU (room for a VLAN tag).
    const mtu = row.pathMtu.effectiveMtu;
    assert.ok(mtu >= 1350 && mtu <= 1354, `the narrowed underlay minus VXLAN: ${mtu}`);
    assert.equal(row.pathMtu.blackHole, true);
    assert.match(
      renderPathMtu(report.rows).join('\n'),
      new RegExp(`\\*\\*PMTU black hole\\*\\*: packets above ${mtu} bytes`),
    );
  } finally {
    interrupts.dispose();
  }
  assert.ok(labId);
  assert.deepEqual(labNamespaces(labId), []);
});
