/**
 * The Service short-connection artifact (docs/findings/service-short-connection-artifact.md)
 * in a real lab, both ways round, in one run:
 * - the ordering that triggered it (short connections to the pod IP, then
 *   right after through a ClusterIP fronting the same server) now reads, with
 *   one Service programmed, within 20% of pod to pod and the guard is silent:
 *   the Service's backend listens on its own port, so no SYN meets the first
 *   phase's TIME_WAIT sockets;
 * - the rejections provoked on purpose make that row invalid, with no number
 *   and the kernel's counters. Two provocations: before the run the same
 *   client loads the Service backend's port at the pod IP directly, as another
 *   workload on a real cluster might (whether those TIME_WAIT sockets refuse
 *   the Service's SYNs as PAWS depends on the sign of the difference of two
 *   TCP timestamp offsets the kernel hashes from the address pairs, a coin
 *   flip per lab: docs/findings/2026-12-06-short-connection-ratio.md); and,
 *   so that the test does not depend on that coin, a quarter of the SYNs to
 *   that port dropped in the server's namespace (iptables statistic), which
 *   the client retries after a second as it does a refused one.
 * Ratios within one run only, and interleaved: the two paths alternate in
 * ABBA order (pod, Service, Service, pod, ...), two rounds a phase, so load
 * from other work on the machine that drifts during the run weighs on both
 * alike, and each path's rate is the mean of its better half of rounds (other
 * work only takes CPU time away: docs/findings/2026-12-06-short-connection-ratio.md).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { serverDrivers } from '../../agent/drivers/registry.js';
import { SERVICE_BACKEND_PORT_OFFSET } from '../../collector/runs/measure-phase.js';
import { trapInterrupts } from '../../core/interrupts.js';
import { createLogger } from '../../core/log.js';
import { run, spawnLongRunning } from '../../core/process.js';
import { SERVER_PORTS } from '../../core/tools.js';
import { runInLab } from '../../lab/session.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { iptablesLab } from '../support/helpers/lab-options.js';
import { notRoot } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-sc-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** The fortio server exactly as the agent starts it. */
const fortioServerArgs = (port: number): string[] => serverDrivers.get('fortio')?.buildServerArgs({ port }) ?? [];

const sc = { kind: 'http', mode: 'short-connection', connections: 64, server: 'fortio', rounds: 2 } as const;
/** ABBA: every Service phase has a pod-to-pod phase beside it on either side, the first pod to pod (the ordering that triggered the artifact). */
const ORDER = ['pod', 'svc', 'svc', 'pod', 'pod', 'svc', 'svc', 'pod'] as const;
const interleaved = ORDER.map((p, i) => ({ ...sc, id: `${p}-${i}`, path: p === 'pod' ? 'pod-to-pod' : 'service' }));
const scenario = {
  name: 'short connections',
  durationSeconds: 2,
  warmupSeconds: 1,
  rounds: 3,
  roundSleepSeconds: 0,
  measurements: [
    // The built-in server's Service backend port, loaded directly by the test before the run. First: its TIME_WAIT
    // sockets last 60 s, less than the interleaved phases take on a loaded machine. It leaves state on that port
    // only; the fortio phases use their own.
    { ...sc, id: 'provoked', path: 'service', server: 'http-echo', warmupSeconds: 0, rounds: 2 },
    ...interleaved,
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
        ...iptablesLab(join(tmp, 'lab.db')),
        beforeAgents: async (lab) => {
          labId = lab.plan.id;
          const [server, client] = lab.plan.nodes;
          const sp = server?.pods[0];
          const cp = client?.pods[0];
          assert.ok(sp && cp);
          const timeWait = (): number =>
            execFileSync(
              'ip',
              ['netns', 'exec', sp.ns, 'ss', '-Htn', 'state', 'time-wait', `sport = :${provokedPort}`],
              // A quiet machine leaves tens of thousands of them: more than execFileSync's default 1 MiB of output.
              { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
            )
              .split('\n')
              .filter(Boolean).length;
          // Short connections from the client pod straight to the port the http-echo Service will front:
          // the server namespace keeps their TIME_WAIT sockets (60 s) after this listener is gone.
          const listener = spawnLongRunning(
            'ip',
            ['netns', 'exec', sp.ns, 'fortio', ...fortioServerArgs(provokedPort)],
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
            // Until the TIME_WAIT sockets cover most of the client's port range (a quiet machine gets there in 3 s, one
            // at load average 40 left 2,900 and the provoked row then met none of them): the Service phase's ports
            // must land on them whatever offset the kernel starts its port search at.
            for (let i = 0; i < 6 && timeWait() < 15_000; i++) {
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
            }
          } finally {
            await listener.stop();
          }
          const tw = timeWait();
          t.diagnostic(`server TIME_WAIT sockets on :${provokedPort} before the run: ${tw}`);
          assert.ok(tw > 1000, `the provocation left ${tw} TIME_WAIT sockets`);
          // The provocation that does not depend on the timestamp offsets' sign: SYNs to that port only, so no
          // other row meets it; the rule goes with the namespace.
          await run(
            'ip',
            [
              'netns',
              'exec',
              sp.ns,
              'iptables',
              '-I',
              'INPUT',
              '-p',
              'tcp',
              '--syn',
              '--dport',
              String(provokedPort),
              '-m',
              'statistic',
              '--mode',
              'random',
              '--probability',
              '0.25',
              '-j',
              'DROP',
            ],
            { tool: 'iptables', timeoutMs: 10_000 },
          );
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
    const provoked = row('provoked');
    const rounds = (path: 'pod' | 'svc'): number[] =>
      interleaved.filter((m) => m.id.startsWith(path)).flatMap((m) => row(m.id)?.metrics[0]?.perRound ?? []);
    for (const m of interleaved) {
      const r = row(m.id);
      assert.ok(r?.value, `${m.id}: a number`);
      assert.ok(!r.warnings.some((w) => w.code === 'connections-refused'), `${m.id}: ${JSON.stringify(r.warnings)}`);
      if (m.path === 'service') assert.ok((r.dnatConnections ?? 0) > 0, `${m.id} went through kube-proxy DNAT`);
    }
    const [pod, svc] = [rounds('pod'), rounds('svc')];
    assert.equal(pod.length, 8);
    assert.equal(svc.length, 8);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    // Other work on the machine can only take CPU time from the rounds, never give it: the rounds it left alone are
    // the upper half, so each path's rate is the mean of its best half (the plain means are printed beside it).
    const upperHalf = (xs: number[]) => mean([...xs].sort((a, b) => b - a).slice(0, Math.ceil(xs.length / 2)));
    const ratio = upperHalf(svc) / upperHalf(pod);
    t.diagnostic(
      `service / pod-to-pod = ${ratio.toFixed(3)} (best half of ${svc.length} rounds each: ${upperHalf(svc).toFixed(0)} / ${upperHalf(pod).toFixed(0)} req/s; all rounds ${(mean(svc) / mean(pod)).toFixed(3)}; ABBA over ${ORDER.length} phases; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')})`,
    );
    // The artifact is a collapse of every round (about 0.1-0.4 of pod to pod); with one Service programmed iptables
    // costs next to nothing at this rate, so the two paths read within 20% of each other.
    assert.ok(Math.abs(ratio - 1) <= 0.2, `Service short connections at ${ratio.toFixed(3)} of pod to pod`);

    assert.ok(provoked?.invalid, `provoked row invalid: ${JSON.stringify(provoked?.warnings)}`);
    assert.equal(provoked.value, null);
    assert.deepEqual(provoked.metrics, []);
    assert.equal(provoked.invalid.code, 'connections-refused');
    // PAWS refusals show only when this lab's coin fell that way; when they happened, the row carries them.
    t.diagnostic(`provoked row's counters: ${JSON.stringify(provoked.invalid.counters)}`);
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
