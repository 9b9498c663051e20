/**
 * The disruption kind end to end through the real CLI (`cni-bench lab
 * --scenario`): a 2-node lab on the emulated kube-proxy in iptables mode,
 * tcp-echo behind one Service in node 0's two pods, the client agent's probe
 * stream from node 1, and the collector firing, one phase each:
 * - endpoint-removed: the peer's endpoint out of the Service (one
 *   iptables-restore transaction per node) and its server stopped;
 * - backend-gone: the peer's server stopped, its endpoint left in place;
 * - backend-link-down: the peer pod's veth set down (its server and endpoint
 *   stay): packets to it vanish, new connections sent there time out (no
 *   RST), and the link is back for the next phase;
 * - services-added: 1,000 Services programmed at once;
 * - services-removed: 1,000 Services, programmed before the stream, removed at once.
 * Each phase's report entry must hold its event inside the stream with a
 * clean baseline, and its summary must agree with its bins. A gone backend
 * that stays in the Service fails new connections until the stream's end (the
 * kernel refuses them: ECONNREFUSED); a removed one, taken out before its
 * server stops, fails few or none.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { checkEntry, type Entry, errorsOf, type KindSummary } from '../support/helpers/disruption-entry.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { CLI_MAIN, startNode } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-disruption-lab-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SECONDS = 8;
const EVENT_AT = 3;
const RATE = 100;

test('disruption phases on the iptables lab: endpoint removed, backend gone without notice, its link down, 1,000 Services added and removed', {
  skip: notRoot,
  timeout: 600_000,
}, async () => {
  const scenario = join(tmp, 'disruption.json');
  const phase = (event: string, more = {}) => ({
    kind: 'disruption',
    event,
    durationSeconds: SECONDS,
    eventAtSeconds: EVENT_AT,
    rate: RATE,
    ...more,
  });
  writeFileSync(
    scenario,
    JSON.stringify({
      name: 'disruption',
      cpuBaselineSeconds: 0,
      measurements: [
        phase('endpoint-removed'),
        phase('backend-gone'),
        phase('backend-link-down'),
        phase('services-added', { services: 1000 }),
        phase('services-removed', { services: 1000 }),
      ],
    }),
  );
  const lab = startNode(CLI_MAIN, ['lab', '--scenario', scenario, '--json', '--db', join(tmp, 'lab.db')]);
  const code = await lab.exited;
  assert.equal(code, 0, lab.output());
  const labId = /"msg":"lab created"[^\n]*"id":"([0-9a-f]+)"/.exec(lab.output())?.[1];
  const report = JSON.parse(lab.stdout());
  assert.equal(report.run.state, 'succeeded');
  const entries = report.disruptions as Entry[];
  assert.deepEqual(
    entries.map((e) => e.event.event),
    ['endpoint-removed', 'backend-gone', 'backend-link-down', 'services-added', 'services-removed'],
  );
  // checkEntry also holds every phase's baseline clean: services-added after backend-link-down shows the link came back.
  const [removed, gone, cut, added, dropped] = entries.map((e) => checkEntry(e, { rate: RATE, seconds: SECONDS })) as [
    KindSummary,
    KindSummary,
    KindSummary,
    KindSummary,
    KindSummary,
  ];

  // Gone without notice: the Service still sends half the new connections to a pod whose server is dead.
  assert.ok(gone.errorsAfter >= 0.2 * gone.attemptsAfter, `backend gone: ${gone.errorsAfter} of ${gone.attemptsAfter}`);
  assert.deepEqual(Object.keys(gone.errorsByReason), ['ECONNREFUSED']);
  const g = entries[1] as Entry;
  const lastTwoSeconds = g.timeline.bins.slice(-20).reduce((a, b) => a + errorsOf(b.new), 0);
  assert.ok(lastTwoSeconds > 0, 'still failing at the end: nothing removed the endpoint');
  assert.equal(g.event.did.endpointKept, true);

  // Its link down: no RST, so no ECONNREFUSED; what is sent there times out (or, once the pod's node gives up
  // resolving its address, comes back host-unreachable), until the stream's end.
  assert.ok(cut.errorsAfter >= 0.2 * cut.attemptsAfter, `link down: ${cut.errorsAfter} of ${cut.attemptsAfter}`);
  assert.ok(cut.errorsByReason.ETIMEDOUT, `link down: ${JSON.stringify(cut.errorsByReason)}`);
  assert.deepEqual(
    Object.keys(cut.errorsByReason).filter((r) => r !== 'ETIMEDOUT' && r !== 'EHOSTUNREACH'),
    [],
    `link down: ${JSON.stringify(cut.errorsByReason)}`,
  );
  const c = entries[2] as Entry;
  assert.ok(
    c.timeline.bins.slice(-20).some((b) => errorsOf(b.new) > 0),
    'still failing at the end',
  );
  assert.match(String(c.event.did.linkDown), /^p1 on /);

  // Removed first, stopped after: the rules no longer sent there (a margin for a slow machine's timeouts).
  assert.ok(
    removed.errorsAfter <= 0.05 * removed.attemptsAfter,
    `endpoint removed: ${removed.errorsAfter} of ${removed.attemptsAfter}`,
  );
  assert.ok((entries[0] as Entry).event.did.removed);

  assert.equal((entries[3] as Entry).event.did.services, 1000);
  assert.ok(added.attemptsAfter > 0);
  // Removed at once: every node's rules lost the 1,000 Services, and the probed one kept working.
  assert.deepEqual((entries[4] as Entry).event.did.removed, 1000);
  assert.equal((entries[4] as Entry).event.did.services, 0);
  assert.ok(dropped.attemptsAfter > 0);
  // The row's headline is the failed probes from the event on.
  const rows = report.rows.filter((r: { unit: string }) => r.unit === 'errors after event');
  assert.equal(rows.length, 5);
  assert.equal(rows[1].value, gone.errorsAfter + ((g.summary.kinds[1] as KindSummary).errorsAfter ?? 0));
  assert.ok(labId, 'the lab logged its id');
  assert.deepEqual(labNamespaces(labId), []);
});
