/**
 * CPU per unit of work in a real lab: the same UDP rate (40 Mbit/s, iperf3)
 * from node 1's pod to node 0's pod in two labs, the second with 20,000 iptables
 * rules that never match walked for every packet in the server pod's INPUT
 * chain (a deliberately added cost, as a long rule list would be). The rate is
 * the same in both; the CPU per Gbit must come out significantly higher with
 * the rules, from the kernel's CPU on the nodes' own CPUs net of the idle
 * baseline.
 *
 * The server pod's receive is steered to its node's CPU (RPS on its eth0, as a
 * NIC's interrupt lands on the receiving node), so the rules cost the server's
 * core, not the sender's: on the sender's core (veth delivers on the sending
 * CPU) they took most of it and the sender fell below the rate. On the
 * receiving core the cost is almost all time no tick samples (the CPU wakes
 * for the packets and sleeps before the next tick), which the report counts as
 * `unsampled` (report/cpu-cost.ts); before it did, this test saw 1-2 CPU-s/Gbit
 * of a cost worth 13 and no verdict.
 *
 * It runs with the long suites (notQuietMachine): other work on the nodes'
 * CPUs moves a round by up to a few hundred millicores, and once it moved the
 * idle baseline by more than the rules cost (docs/testing.md).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { run } from '../../core/process.js';
import { runInLab } from '../../lab/session.js';
import { compareRounds } from '../../report/significance.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { labTest } from '../support/helpers/lab-test.js';
import { notQuietMachine } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-cpu-cost-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const RULES = 20_000;
const MBPS = 40;

const scenario = {
  name: 'cpu cost',
  durationSeconds: 3,
  warmupSeconds: 1,
  rounds: 8,
  roundSleepSeconds: 1,
  serverNode: 'lab-n0',
  clientNode: 'lab-n1',
  measurements: [{ id: 'udp', kind: 'throughput', path: 'pod-to-pod', protocol: 'udp', udpTargetMbps: MBPS }],
};

/** RULES source matches on addresses nothing sends from (198.19.0.0/16), walked in order for every packet. */
function costlyRules(): string {
  const lines = ['*filter', ':CNIB-COST - [0:0]', '-A INPUT -j CNIB-COST'];
  for (let i = 0; i < RULES; i++) lines.push(`-A CNIB-COST -s 198.19.${i >> 8}.${i & 255}/32 -j DROP`);
  return `${[...lines, 'COMMIT'].join('\n')}\n`;
}

labTest(
  'CPU per Gbit: the same rate costs significantly more with thousands of rules walked per packet',
  600_000,
  async (t, { log, signal }) => {
    const db = join(tmp, 'lab.db');
    const rows = [];
    const labIds: string[] = [];
    for (const costly of [false, true]) {
      const report = await runInLab(
        {
          nodes: 2,
          proxy: { mode: 'iptables', iptablesBackend: 'legacy' },
          dbPath: db,
          agentWaitMs: 30_000,
          beforeAgents: async (lab) => {
            labIds.push(lab.plan.id);
            const pod = lab.plan.nodes[0]?.pods[0];
            assert.ok(pod);
            // The server pod's receive on its node's CPUs, in both labs (the same placement, with and without the cost).
            const cpus = lab.plan.nodes[0]?.cpus ?? [];
            assert.ok(cpus.length, 'node 0 has its own CPUs (a machine with at least 2)');
            const mask = cpus.reduce((m, c) => m | (1 << c), 0).toString(16);
            const rps = '/sys/class/net/eth0/queues/rx-0/rps_cpus';
            await run('ip', ['netns', 'exec', pod.ns, 'tee', rps], { input: mask });
            const set = await run('ip', ['netns', 'exec', pod.ns, 'cat', rps]);
            assert.equal(Number.parseInt(set.stdout.trim().replaceAll(',', ''), 16), Number.parseInt(mask, 16));
            if (!costly) return;
            await run('ip', ['netns', 'exec', pod.ns, 'iptables-legacy-restore', '--noflush'], {
              input: costlyRules(),
            });
            const listed = await run('ip', ['netns', 'exec', pod.ns, 'iptables-legacy', '-S', 'CNIB-COST']);
            // Verified in the dataplane, not because restore returned: the chain holds every rule.
            assert.equal(listed.stdout.split('\n').filter((l) => l.startsWith('-A CNIB-COST')).length, RULES);
          },
        },
        { ...scenario, name: costly ? `cpu cost +${RULES} rules` : 'cpu cost plain' },
        log,
        signal,
      );
      assert.equal(report?.run.state, 'succeeded', JSON.stringify(report?.run));
      const row = report?.rows.find((r) => r.id === 'udp');
      assert.ok(row, 'the udp row');
      rows.push(row);
    }
    const [plain, costly] = rows as [(typeof rows)[number], (typeof rows)[number]];
    const cpu = (r: typeof plain) => r.metrics.find((m) => m.name === 'cpu-per-gbit');
    for (const r of [plain, costly]) {
      const c = cpu(r);
      t.diagnostic(
        `${r.measurement}: ${r.value?.toFixed(3)} Gbit/s, ${c?.value.toFixed(3)} ${c?.unit} per round ${c?.perRound.map((v) => v.toFixed(3)).join(' ')}; client sys/softirq/unsampled ${Math.round((r.cpu?.client.system ?? 0) * 1000)}/${Math.round((r.cpu?.client.softirq ?? 0) * 1000)}/${Math.round((r.cpu?.client.unsampled ?? 0) * 1000)} m, server ${Math.round((r.cpu?.server.system ?? 0) * 1000)}/${Math.round((r.cpu?.server.softirq ?? 0) * 1000)}/${Math.round((r.cpu?.server.unsampled ?? 0) * 1000)} m ${r.cpuMissing ?? ''}`,
      );
      assert.ok(c, `${r.measurement}: no CPU per Gbit (${r.cpuMissing})`);
      assert.equal(c.perRound.length, 8);
      assert.ok(r.cpu?.clientCpus.length && r.cpu.serverCpus.length, 'the nodes CPUs are named');
    }
    const verdict = compareRounds(cpu(plain)?.perRound ?? [], cpu(costly)?.perRound ?? [], {
      higherIsBetter: false,
      noiseFloor: 0.1,
    });
    t.diagnostic(`costly vs plain: ${verdict.verdict} (${verdict.reason}), ${(100 * verdict.relDiff).toFixed(0)}%`);
    // The same work: both rates within 15% of the target (a sender on a shared core slows when its CPU is taken).
    for (const r of [plain, costly])
      assert.ok(Math.abs((r.value ?? 0) * 1000 - MBPS) < MBPS * 0.15, `not the same work: ${r.value} Gbit/s`);
    assert.equal(verdict.verdict, 'worse', verdict.reason);
    // Only this test's labs: others may run beside it on a shared machine.
    for (const id of labIds) assert.deepEqual(labNamespaces(id), []);
  },
  notQuietMachine,
);
