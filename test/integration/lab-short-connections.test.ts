/**
 * The Service short-connection artifact (docs/findings/service-short-connection-artifact.md)
 * in a real lab, both ways round, in one run:
 * - the ordering that triggered it (short connections to the pod IP, then
 *   right after through a ClusterIP fronting the same server) now reads, with
 *   one Service programmed, within 20% of pod to pod and the guard is silent:
 *   the Service's backend listens on its own port, so no SYN meets the first
 *   phase's TIME_WAIT sockets;
 * - the rejections provoked on purpose (before the run, the same client loads
 *   the Service backend's port at the pod IP directly for 3 s, as another
 *   workload on a real cluster might) make that row invalid, with no number
 *   and the kernel's counters.
 * Ratios within one run only: the machine may be loaded.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SERVICE_BACKEND_PORT_OFFSET } from '../../collector/runs/measure-phase.js';
import { trapInterrupts } from '../../core/interrupts.js';
import { createLogger } from '../../core/log.js';
import { run, spawnLongRunning } from '../../core/process.js';
import { SERVER_PORTS } from '../../core/tools.js';
import { runInLab } from '../../lab/session.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { notRoot } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-sc-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const sc = { kind: 'http', mode: 'short-connection', connections: 64 } as const;
const scenario = {
  name: 'short connections',
  durationSeconds: 2,
  warmupSeconds: 1,
  rounds: 3,
  roundSleepSeconds: 0,
  measurements: [
    // Five rounds each: the medians hold on a loaded shared machine.
    { ...sc, id: 'direct', path: 'pod-to-pod', server: 'fortio', rounds: 5 },
    { ...sc, id: 'service', path: 'service', server: 'fortio', rounds: 5 },
    // The built-in server's Service backend port, loaded directly by the test before the run.
    { ...sc, id: 'provoked', path: 'service', server: 'http-echo', warmupSeconds: 0, rounds: 2 },
  ],
};

test('short connections through a Service read like pod to pod after a pod-to-pod phase; rejections provoked on purpose make the row invalid', {
  skip: notRoot,
  timeout: 300_000,
}, async (t) => {
  const log = createLogger({ component: 'test' }, 'warn');
  const interrupts = trapInterrupts(log);
  const provokedPort = (SERVER_PORTS['http-echo']?.port ?? 0) + SERVICE_BACKEND_PORT_OFFSET;
  let labId = '';
  try {
    const report = await runInLab(
      {
        nodes: 2,
        proxy: { mode: 'iptables', iptablesBackend: 'legacy' },
        dbPath: join(tmp, 'lab.db'),
        agentWaitMs: 30_000,
        beforeAgents: async (lab) => {
          labId = lab.plan.id;
          const [server, client] = lab.plan.nodes;
          const sp = server?.pods[0];
          const cp = client?.pods[0];
          assert.ok(sp && cp);
          // Short connections from the client pod straight to the port the http-echo Service will front:
          // the server namespace keeps their TIME_WAIT sockets (60 s) after this listener is gone.
          const listener = spawnLongRunning(
            'ip',
            [
              'netns',
              'exec',
              sp.ns,
              'fortio',
              'server',
              '-http-port',
              String(provokedPort),
              '-grpc-port',
              'disabled',
              '-redirect-port',
              'disabled',
              '-loglevel',
              'error',
            ],
            { tool: 'fortio' },
          );
          try {
            await run(
              'ip',
              [
                'netns',
                'exec',
                sp.ns,
                'sh',
                '-c',
                `for i in $(seq 50); do ss -Hltn sport = :${provokedPort} | grep -q . && exit 0; sleep 0.1; done; exit 1`,
              ],
              { tool: 'ss', timeoutMs: 10_000 },
            );
            await run(
              'ip',
              [
                'netns',
                'exec',
                cp.ns,
                'wrk',
                '-t2',
                '-c64',
                '-d3s',
                '-H',
                'Connection: close',
                `http://${sp.ip}:${provokedPort}/`,
              ],
              { tool: 'wrk', timeoutMs: 30_000 },
            );
          } finally {
            await listener.stop();
          }
          const tw = execFileSync(
            'ip',
            ['netns', 'exec', sp.ns, 'ss', '-Htn', 'state', 'time-wait', `sport = :${provokedPort}`],
            // A quiet machine leaves tens of thousands of them: more than execFileSync's default 1 MiB of output.
            { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
          )
            .split('\n')
            .filter(Boolean).length;
          t.diagnostic(`server TIME_WAIT sockets on :${provokedPort} before the run: ${tw}`);
          assert.ok(tw > 1000, `the provocation left ${tw} TIME_WAIT sockets`);
        },
      },
      scenario,
      log,
      interrupts.signal,
    );
    assert.ok(report, 'a report');
    for (const r of report.rows) {
      assert.equal(r.status, 'succeeded', `${r.id}: ${r.error}`);
      t.diagnostic(
        `${r.id}: ${r.value} ${r.unit} per round ${JSON.stringify(r.metrics[0]?.perRound)} ${r.warnings.map((w) => `[${w.code}] ${w.message}`).join(' ')}`,
      );
    }
    const row = (id: string) => report.rows.find((r) => r.id === id);
    const direct = row('direct');
    const service = row('service');
    const provoked = row('provoked');
    assert.ok(direct?.value && service?.value, 'both rows have numbers');
    for (const r of [direct, service])
      assert.ok(!r.warnings.some((w) => w.code === 'connections-refused'), `${r.id}: ${JSON.stringify(r.warnings)}`);
    assert.ok((service.dnatConnections ?? 0) > 0, 'the Service row went through kube-proxy DNAT');
    const ratio = service.value / direct.value;
    t.diagnostic(`service / pod-to-pod = ${ratio.toFixed(3)} (${service.value} / ${direct.value} req/s)`);
    // The artifact is a collapse (about 0.1-0.4 of pod to pod). Beside other load the two rows have read from 0.82x
    // to 1.37x of each other, which is not the artifact and is not explained yet (issue 18): the test holds a lower
    // bound that the artifact cannot meet, not the issue's 20% band.
    assert.ok(ratio > 0.7, `Service short connections at ${ratio.toFixed(3)} of pod to pod`);

    assert.ok(provoked?.invalid, `provoked row invalid: ${JSON.stringify(provoked?.warnings)}`);
    assert.equal(provoked.value, null);
    assert.deepEqual(provoked.metrics, []);
    assert.equal(provoked.invalid.code, 'connections-refused');
    assert.ok(
      (provoked.invalid.counters['server.TcpExtPAWSTimewait'] ?? 0) > 0,
      JSON.stringify(provoked.invalid.counters),
    );
    assert.ok(
      (provoked.invalid.counters['client.TcpExtTCPSynRetrans'] ?? 0) > 0,
      JSON.stringify(provoked.invalid.counters),
    );
    // Its own lab only: another lab may be running beside it.
    assert.deepEqual(labNamespaces(labId), []);
  } finally {
    interrupts.dispose();
  }
});
