/**
 * The disruption events on the real Cilium lab (cilium-agent v1.20 per node,
 * its socket and tc load balancers programmed from the lab apiserver's
 * Services and EndpointSlices), one phase each, through the lab session as the
 * CLI runs it: the peer's endpoint removed (one PUT of the EndpointSlice, then
 * its server stopped), the backend gone without notice, its link down, 200
 * Services added at once and 200 removed at once, and the client node's
 * cilium-agent restarted.
 * Each phase's entry must hold its event inside the stream after a clean
 * baseline with a summary that agrees with its bins, and each event must show
 * what it does to traffic on Cilium: a removed endpoint no longer chosen by
 * the stream's end; a gone backend refusing (ECONNREFUSED) and a cut one
 * timing out until the end, since nothing removes them; a restarted agent
 * whose pinned datapath keeps carrying new and kept connections (before the
 * lab held each node's bpffs, 1,363 of 1,710 new connections failed).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { trapInterrupts } from '../../core/interrupts.js';
import { createLogger } from '../../core/log.js';
import { runInLab } from '../../lab/session.js';
import { checkEntry, type Entry, errorsOf, type KindSummary } from '../support/helpers/disruption-entry.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { notRoot } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-cilium-disruption-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SECONDS = 8;
const RESTART_SECONDS = 14;
const RATE = 100;
const SERVICES = 200;

test('disruption phases on the Cilium lab: endpoint removed, backend gone, its link down, 200 Services added and removed, cilium-agent restarted', {
  skip: notRoot,
  timeout: 900_000,
}, async (t) => {
  const log = createLogger({ component: 'test' }, 'warn');
  const interrupts = trapInterrupts(log);
  const phase = (event: string, more: Record<string, unknown> = {}) => ({
    kind: 'disruption',
    event,
    durationSeconds: SECONDS,
    eventAtSeconds: 3,
    rate: RATE,
    ...more,
  });
  let labId = '';
  try {
    const report = await runInLab(
      {
        nodes: 2,
        proxy: { mode: 'cilium' },
        dbPath: join(tmp, 'lab.db'),
        agentWaitMs: 120_000,
        beforeAgents: async (lab) => {
          labId = lab.plan.id;
        },
      },
      {
        name: 'cilium disruption',
        cpuBaselineSeconds: 0,
        measurements: [
          phase('endpoint-removed'),
          phase('backend-gone'),
          phase('backend-link-down'),
          phase('services-added', { services: SERVICES }),
          phase('services-removed', { services: SERVICES }),
          phase('dataplane-restart', { durationSeconds: RESTART_SECONDS }),
        ],
      },
      log,
      interrupts.signal,
    );
    assert.equal(report?.run.state, 'succeeded', JSON.stringify(report?.run));
    const entries = (report?.disruptions ?? []) as unknown as Entry[];
    for (const e of entries)
      t.diagnostic(
        `${e.event.event}: ${JSON.stringify(e.summary.kinds.map((k) => [k.kind, k.errorsAfter, k.attemptsAfter, k.errorsByReason, k.recoveredAfterMs]))} did ${JSON.stringify(e.event.did)}`,
      );
    assert.deepEqual(
      entries.map((e) => e.event.event),
      [
        'endpoint-removed',
        'backend-gone',
        'backend-link-down',
        'services-added',
        'services-removed',
        'dataplane-restart',
      ],
    );
    for (const e of entries) assert.equal(e.event.error, undefined, `${e.event.event} failed: ${e.event.error}`);
    const [removed, gone, cut, added, dropped, restarted] = entries.map((e, i) =>
      checkEntry(e, { rate: RATE, seconds: i === 5 ? RESTART_SECONDS : SECONDS }),
    ) as [KindSummary, KindSummary, KindSummary, KindSummary, KindSummary, KindSummary];
    const lastTwoSeconds = (e: Entry, kind: 'new' | 'kept') =>
      e.timeline.bins.slice(-20).reduce((a, b) => a + errorsOf(b[kind]), 0);

    // Removed through the EndpointSlice: by the stream's end no node's Cilium sends there any more.
    assert.ok((entries[0] as Entry).event.did.removed);
    assert.equal(lastTwoSeconds(entries[0] as Entry, 'new'), 0, 'endpoint removed: still failing at the end');
    assert.ok(removed.attemptsAfter > 0);

    // Gone without notice: Cilium still picks it for about half the new connections, and its kernel refuses them.
    assert.ok(gone.errorsAfter >= 0.2 * gone.attemptsAfter, `backend gone: ${gone.errorsAfter}`);
    assert.deepEqual(Object.keys(gone.errorsByReason), ['ECONNREFUSED']);
    assert.ok(lastTwoSeconds(entries[1] as Entry, 'new') > 0, 'backend gone: nothing removed it');

    // Its link down: no RST, what is sent there times out, until the end.
    assert.ok(cut.errorsAfter >= 0.2 * cut.attemptsAfter, `link down: ${cut.errorsAfter}`);
    assert.ok(cut.errorsByReason.ETIMEDOUT, `link down: ${JSON.stringify(cut.errorsByReason)}`);
    assert.ok(lastTwoSeconds(entries[2] as Entry, 'new') > 0, 'link down: nothing removed it');

    assert.equal((entries[3] as Entry).event.did.services, SERVICES);
    assert.ok(added.attemptsAfter > 0);
    assert.equal((entries[4] as Entry).event.did.removed, SERVICES);
    assert.equal((entries[4] as Entry).event.did.services, 0);
    assert.ok(dropped.attemptsAfter > 0);

    // The agent restarted (a new process, ready, its endpoints back) and the pinned datapath kept carrying traffic.
    const did = (entries[5] as Entry).event.did;
    const pids = /pid (\d+), now (\d+)/.exec(String(did.restarted));
    assert.ok(pids && pids[1] !== pids[2], `a new cilium-agent: ${did.restarted}`);
    assert.equal(typeof did.readyMs, 'number');
    assert.equal(typeof did.endpointsReadyMs, 'number');
    const kept = (entries[5] as Entry).summary.kinds.find((k) => k.kind === 'kept');
    for (const k of [restarted, kept])
      assert.ok(
        (k?.errorsAfter ?? 1) <= 0.1 * (k?.attemptsAfter ?? 0),
        `restart: ${k?.kind} ${k?.errorsAfter} of ${k?.attemptsAfter} failed`,
      );
  } finally {
    interrupts.dispose();
  }
  assert.ok(labId);
  assert.deepEqual(labNamespaces(labId), []);
});
