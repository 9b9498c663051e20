/**
 * The LB-map preflight against real Cilium, in one 2-node `cilium` lab whose
 * cilium-config sets a deliberately small bpf-lb-map-max (256; read back from
 * each node's loaded cilium_lb4_services_v2 with bpftool in the agent's mount
 * namespace). A sweep whose largest step needs more is refused with the exact
 * command, and nothing changes. With the opt-in the same sweep raises it:
 * cilium-config patched, every agent restarted, every node's loaded map seen
 * at the new size (by the collector through the agents' samples, and by this
 * test with bpftool while the run goes on), the steps measured through the
 * Service, then the old value put back, the agents restarted, and every node's
 * map at 256 again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type Collector, collectorConfig, startCollector } from '../../collector/index.js';
import { createLogger } from '../../core/log.js';
import { lbMapSweep, loadedMax, smallLbMapLab, watchLoadedMax } from '../support/helpers/cilium-lb-map.js';
import { ciliumLeftovers, NOTHING_LEFT } from '../support/helpers/cilium-state.js';
import { waitFor } from '../support/helpers/procs.js';
import { notLong } from '../support/helpers/root.js';

const SMALL = 256;
const log = createLogger({ test: 'lab-cilium-preflight' }, 'warn');
const tmp = mkdtempSync(join(tmpdir(), 'cnib-cilium-pre-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SWEEP = lbMapSweep('preflight sweep');

test('Cilium LB-map preflight: refused with the exact command, then raised, verified on every node, measured, reverted and verified', {
  skip: notLong,
  timeout: 900_000,
}, async (t) => {
  const { lab, cilium } = await smallLbMapLab(log, SMALL);
  let collector: Collector | undefined;
  const id = lab.plan.id;
  try {
    assert.deepEqual(await loadedMax(cilium), [SMALL, SMALL], 'the deliberately small map is what the kernel holds');
    collector = await startCollector(
      collectorConfig({
        grpcListen: `unix:${lab.controlSocket}`,
        httpHost: '127.0.0.1',
        httpPort: 0,
        dbPath: join(tmp, 'lab.db'),
        heartbeatIntervalMs: 1000,
        livenessTimeoutMs: 30_000,
      }),
      log,
      lab.services,
    );
    const c = collector;
    lab.startAgents(c.grpcAddress);
    await waitFor(`${lab.agentCount} agents`, () => c.registry.available().length === lab.agentCount, 60_000);

    // Without the opt-in: refused before any step, with the exact command; nothing changed.
    const refused = c.api.create(SWEEP, {});
    await c.orchestrator.wait(refused.id);
    const r1 = c.api.reportModel(refused.id);
    assert.equal(r1?.run.state, 'failed');
    const reason = r1?.run.reason ?? '';
    assert.match(reason, /serviceScale\.steps: 100 Services .* the loaded map holds 256 \(loaded maps on /, reason);
    assert.ok(
      reason.includes(
        `Run: kubectl -n kube-system patch configmap cilium-config --type merge -p '{"data":{"bpf-lb-map-max":"65536"}}' && kubectl -n kube-system rollout restart daemonset/cilium && kubectl -n kube-system rollout status daemonset/cilium`,
      ),
      reason,
    );
    assert.deepEqual(await loadedMax(cilium), [SMALL, SMALL]);

    // With the opt-in: watch every node's loaded map while the sweep runs.
    cilium.setAllowCiliumConfigChange(true);
    const watch = watchLoadedMax(cilium);
    const seen = watch.seen;
    const began = Date.now();
    const raised = c.api.create(SWEEP, {});
    await c.orchestrator.wait(raised.id);
    await watch.stop();
    const wall = Date.now() - began;
    const r2 = c.api.reportModel(raised.id);
    assert.equal(r2?.run.state, 'succeeded', r2?.run.reason);
    const pre = cilium.lbMapPreflight;
    assert.equal(pre?.check.fits, false);
    assert.equal(pre?.change?.to, 65_536);
    assert.equal(pre?.change?.from, String(SMALL));
    assert.equal(pre?.check.nodes.length, lab.agentCount, 'every agent sampled its node before');
    assert.deepEqual(pre?.reverted?.restoredTo, SMALL);
    for (const n of ['n0', 'n1']) assert.ok(seen.has(`${n}:65536`), `${n}'s loaded map read 65536: ${[...seen]}`);
    // Measured at both steps, through the Service Cilium programmed.
    const rows = (r2?.rows ?? []).filter((row) => row.path === 'service');
    assert.equal(rows.length, 2, JSON.stringify(rows.map((x) => x.status)));
    for (const row of rows) assert.equal(row.status, 'succeeded', JSON.stringify(row).slice(0, 1500));
    // Reverted: the old value in cilium-config, every node's loaded map at 256 again.
    assert.deepEqual(await loadedMax(cilium), [SMALL, SMALL]);
    t.diagnostic(
      `needed ${pre?.check.needed} > ${pre?.check.max}; raised to ${pre?.change?.to} and verified on every node in ${pre?.change?.raisedMs} ms; reverted to ${pre?.reverted?.restoredTo} and verified in ${pre?.reverted?.verifiedMs} ms; run ${wall} ms; seen ${[...seen].sort().join(' ')}`,
    );
  } finally {
    await collector?.close().catch(() => undefined);
    await lab.destroy();
  }
  assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
});
