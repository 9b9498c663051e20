/**
 * The lab's real-kube-proxy dataplanes through the real CLI (`cni-bench lab
 * --dataplane kube-proxy-*`): a 2-node lab whose nodes each run the real
 * kube-proxy v1.37 against the lab's own control plane.
 * - kube-proxy-iptables and kube-proxy-nftables: one throughput row through
 *   the Service and one dataplane-restart disruption phase; while it runs, the
 *   client node holds kube-proxy's own rule for the run's Service (a
 *   KUBE-SERVICES jump to its KUBE-SVC chain; a service-ips element), from the
 *   EndpointSlice the lab wrote; the restart gives the client node's
 *   kube-proxy a new pid, and the summary agrees with the timeline's bins.
 * - kube-proxy-nftables: SIGTERM once kube-proxy's service-ips map holds the
 *   run's Service in both nodes: the lab exits 143 and leaves nothing behind
 *   (namespaces, kube-proxy and control-plane processes, run directory, state).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ciliumLeftovers, labIdOfPid, NOTHING_LEFT } from '../support/helpers/cilium-state.js';
import { CLI_MAIN, startNode, waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-kube-proxy-lab-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SECONDS = 8;
const EVENT_AT = 3;
const RATE = 100;

/** A node namespace's rules as the real kube-proxy keeps them ('' once the namespace is gone). */
function rules(ns: string, mode: 'iptables' | 'nftables'): string {
  try {
    const [file, args] =
      mode === 'iptables' ? ['iptables-save', ['-t', 'nat']] : ['nft', ['list', 'table', 'ip', 'kube-proxy']];
    return execFileSync('ip', ['netns', 'exec', ns, file as string, ...(args as string[])], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return '';
  }
}

interface Bin {
  attempts: number;
  errors: Record<string, number>;
}

/** kube-proxy's own rule for a run Service (named cni-bench/cni-bench-*): its KUBE-SERVICES jump, its service-ips element. */
const RUN_SERVICE = {
  iptables: /^-A KUBE-SERVICES .*--comment "cni-bench\/cni-bench-[^"]* cluster IP".* -j KUBE-SVC-[A-Z0-9]+$/m,
  nftables: /\d+\.\d+\.\d+\.\d+ \. tcp \. \d+ : goto service-[A-Z0-9]+-cni-bench\/cni-bench-/,
};

for (const mode of ['iptables', 'nftables'] as const)
  test(`kube-proxy-${mode} lab: a throughput row and a kube-proxy restart, through the real kube-proxy rules`, {
    skip: notRoot,
    timeout: 300_000,
  }, async (t) => {
    const scenario = join(tmp, `${mode}.json`);
    writeFileSync(
      scenario,
      JSON.stringify({
        name: 'real kube-proxy',
        cpuBaselineSeconds: 0,
        measurements: [
          { kind: 'throughput', path: 'service', tool: 'iperf3', durationSeconds: 3, warmupSeconds: 0, rounds: 1 },
          {
            kind: 'disruption',
            event: 'dataplane-restart',
            durationSeconds: SECONDS,
            eventAtSeconds: EVENT_AT,
            rate: RATE,
          },
        ],
      }),
    );
    const lab = startNode(
      CLI_MAIN,
      [
        'lab',
        '--dataplane',
        `kube-proxy-${mode}`,
        '--nodes',
        '2',
        '--scenario',
        scenario,
        '--json',
        '--db',
        join(tmp, `${mode}.db`),
      ],
      { CNI_BENCH_LOG_LEVEL: 'info' },
    );
    const id = await waitFor('the lab state file', () => labIdOfPid(lab.child.pid ?? -1), 60_000, 100);
    // The client node (node 1) while the run's Services exist (until the lab ends): kube-proxy's own rule for one.
    let svcRule = '';
    while (lab.child.exitCode === null && !svcRule) {
      svcRule = RUN_SERVICE[mode].exec(rules(`cnib-${id}-n1`, mode))?.[0] ?? '';
      await new Promise((r) => setTimeout(r, 200));
    }
    const code = await lab.exited;
    assert.equal(code, 0, lab.output().slice(-4000));
    assert.ok(svcRule, `kube-proxy's rule for the run's Service in the client node:\n${lab.output().slice(-2000)}`);
    const report = JSON.parse(lab.stdout());
    assert.equal(report.run.state, 'succeeded');
    assert.equal(report.cluster.description.kubeProxyMode, `${mode} (real kube-proxy)`);
    const tput = report.rows.find((r: { unit: string }) => /bit/.test(r.unit));
    assert.ok(
      tput && tput.value > 0,
      `a throughput row: ${JSON.stringify(report.rows.map((r: { unit: string }) => r.unit))}`,
    );

    const [entry] = report.disruptions;
    t.diagnostic(
      `throughput ${tput.value} ${tput.unit}; restart: ${JSON.stringify(entry.event.did)}; ${entry.summary.kinds
        .map(
          (k: { kind: string; errorsAfter: number; attemptsAfter: number }) =>
            `${k.kind} ${k.errorsAfter}/${k.attemptsAfter} errors`,
        )
        .join(', ')}`,
    );
    assert.equal(entry.event.event, 'dataplane-restart');
    assert.equal(entry.event.error, undefined, JSON.stringify(entry.event));
    const pids = new RegExp(`kube-proxy \\(${mode}\\) on \\S+ \\(pid (\\d+), now (\\d+)\\)`).exec(
      String(entry.event.did.restarted),
    );
    assert.ok(pids, `restarted: ${entry.event.did.restarted}`);
    assert.notEqual(pids[1], pids[2], 'a new kube-proxy process');
    assert.ok(entry.event.did.readyMs >= 0 && entry.event.did.readyMs <= entry.event.did.seenReadyMs + 1);
    // The summary agrees with the bins it came from, and the event is inside the stream after a clean baseline.
    const tl = entry.timeline;
    const first = Math.floor(entry.summary.eventAtMs / tl.binMs);
    assert.ok(first >= 10 && first < tl.bins.length - 10, `event in bin ${first} of ${tl.bins.length}`);
    for (const k of entry.summary.kinds) {
      const bins = tl.bins.slice(first).map((b: { new: Bin; kept: Bin }) => b[k.kind as 'new' | 'kept']);
      const errors = bins.reduce((a: number, b: Bin) => a + Object.values(b.errors).reduce((x, y) => x + y, 0), 0);
      assert.equal(k.errorsAfter, errors, `${k.kind}: errors after the event`);
      assert.equal(
        k.attemptsAfter,
        bins.reduce((a: number, b: Bin) => a + b.attempts, 0),
      );
      assert.equal(k.baseline.errorShare, 0, `${k.kind}: errors before the event`);
    }
    const attempts = tl.bins.reduce((a: number, b: { new: Bin }) => a + b.new.attempts, 0);
    assert.ok(attempts >= RATE * SECONDS * 0.95, `${attempts} new-connection attempts of ${RATE * SECONDS}`);
    assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
  });

test('kube-proxy-nftables lab: SIGTERM once the real kube-proxy programmed the run Service leaves nothing behind', {
  skip: notRoot,
  timeout: 300_000,
}, async () => {
  // One long, light phase through a Service: a probe stream whose event would come long after the SIGTERM.
  const scenario = join(tmp, 'nftables.json');
  writeFileSync(
    scenario,
    JSON.stringify({
      name: 'real kube-proxy, interrupted',
      cpuBaselineSeconds: 0,
      measurements: [
        { kind: 'disruption', event: 'dataplane-restart', durationSeconds: 120, eventAtSeconds: 110, rate: 20 },
      ],
    }),
  );
  const lab = startNode(
    CLI_MAIN,
    ['lab', '--dataplane', 'kube-proxy-nftables', '--nodes', '2', '--scenario', scenario, '--db', join(tmp, 'n.db')],
    { CNI_BENCH_LOG_LEVEL: 'info' },
  );
  const id = await waitFor('the lab state file', () => labIdOfPid(lab.child.pid ?? -1), 60_000, 100);
  await waitFor(
    "kube-proxy's service-ips element for the run Service in both nodes",
    () =>
      lab.child.exitCode !== null ||
      [0, 1].every((n) => RUN_SERVICE.nftables.test(rules(`cnib-${id}-n${n}`, 'nftables'))),
    120_000,
    300,
  ).catch((err: Error) => {
    lab.child.kill('SIGKILL');
    throw err;
  });
  assert.equal(lab.child.exitCode, null, `lab exited early:\n${lab.output().slice(-4000)}`);
  assert.match(execFileSync('ip', ['netns', 'pids', `cnib-${id}-n0`], { encoding: 'utf8' }), /\d/);
  lab.child.kill('SIGTERM');
  assert.equal(await lab.exited, 143, lab.output().slice(-4000));
  assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
});
