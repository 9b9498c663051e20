import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProcStatCpus, sumCpus } from '../../../agent/samplers/kernel-cpu.js';
import { DataplaneSample, JobResult, type KernelCpu } from '../../../gen/cnibench/v1/agent.js';
import { cpuCost, cpuWindow, dataplaneCpu, netOfBaseline, pooled } from '../../../report/cpu-cost.js';
import { fixture } from '../../support/helpers/fixtures.js';
import { reportRow } from '../../support/helpers/report-rows.js';

/** A node's KernelCpu as the agent builds it from a captured /proc/stat, restricted to `cpus`. */
function kernel(file: string, cpus: number[], extra: Partial<KernelCpu> = {}): KernelCpu {
  return {
    readAtMs: 0,
    cpus,
    ticksPerSecond: 100,
    ...sumCpus(parseProcStatCpus(fixture(`proc-stat/${file}`)), cpus),
    agentUserSeconds: 0,
    agentSystemSeconds: 0,
    processes: [],
    ...extra,
  };
}

// Both windows were 2 s long (`sleep 2` between the two cats; test/fixtures/README.md).
const W = 2000;

test('the idle baseline per second is subtracted over the window length (fixtures of /proc/stat)', () => {
  const base = cpuWindow(kernel('idle-before.txt', [1]), kernel('idle-after.txt', [1]), W);
  const load = cpuWindow(kernel('load-before.txt', [1]), kernel('load-after.txt', [1]), W);
  // CPU 1 system ticks: 235023 → 235056 idle (33), 235067 → 235117 loaded (50).
  assert.equal(base.cpu.system.toFixed(2), '0.33');
  assert.equal(load.cpu.system.toFixed(2), '0.50');
  const net = netOfBaseline(load, base);
  assert.equal(net.cpu.system.toFixed(2), '0.17');
  // A window twice as long subtracts twice the baseline.
  const long = netOfBaseline({ seconds: 4, cpu: { ...load.cpu } }, base);
  assert.equal(long.cpu.system.toFixed(2), (0.5 - 0.66).toFixed(2));
  // Restricting to the node's CPU matters: CPU 0 moved by 21 ticks under load, not 50.
  assert.equal(
    cpuWindow(kernel('load-before.txt', [0]), kernel('load-after.txt', [0]), W).cpu.system.toFixed(2),
    '0.21',
  );
});

test('busy time no tick sampled counts: a CPU woken by packets that sleeps before the next tick (fixtures of /proc/stat)', () => {
  // Read times from test/fixtures/README.md: 2,016 ms with 20,000 rules walked on CPU 0, 2,008 ms without.
  const at = (readAtMs: number) => ({ readAtMs });
  const rules = cpuWindow(
    kernel('rps-rules-before.txt', [0], at(1796574093740)),
    kernel('rps-rules-after.txt', [0], at(1796574095756)),
    9999, // the reads' own times win over the samples'
  );
  const plain = cpuWindow(
    kernel('rps-plain-before.txt', [0], at(1796574100388)),
    kernel('rps-plain-after.txt', [0], at(1796574102396)),
    9999,
  );
  assert.equal(rules.seconds, 2.016);
  // CPU 0's fields moved by 107 ticks (system 2, softirq 3, idle 102) of 201.6 elapsed.
  assert.equal(rules.cpu.unsampled.toFixed(3), '0.946');
  assert.equal(rules.cpu.softirq.toFixed(2), '0.03');
  assert.equal(plain.cpu.unsampled.toFixed(3), '0.008');
  // The headline holds it: the rules' cost is visible only there.
  assert.ok(dataplaneCpu(rules.cpu) - dataplaneCpu(plain.cpu) > 0.9);
  // Both CPUs: elapsed counts once per CPU.
  const both = cpuWindow(
    kernel('rps-rules-before.txt', [0, 1], at(1796574093740)),
    kernel('rps-rules-after.txt', [0, 1], at(1796574095756)),
    1,
  );
  assert.equal(both.cpu.unsampled.toFixed(3), (0.946 + (201.6 - 189) / 100).toFixed(3));
  // Samples without read times (older agents): nothing unsampled is claimed, the samples' elapsed is used.
  const old = cpuWindow(kernel('rps-rules-before.txt', [0]), kernel('rps-rules-after.txt', [0]), 2000);
  assert.equal(old.cpu.unsampled, 0);
  assert.equal(old.seconds, 2);
});

test('a restarted dataplane process, changed CPUs or ticks going back make the window unusable', () => {
  const kp = (pid: number, user: number) => ({
    processes: [{ name: 'kube-proxy', userSeconds: user, systemSeconds: 0, pids: [pid] }],
  });
  const a = kernel('load-before.txt', [1], kp(10, 5));
  assert.equal(cpuWindow(a, kernel('load-after.txt', [1], kp(10, 5.5)), W).cpu.dataplaneUser, 0.5);
  assert.throws(() => cpuWindow(a, kernel('load-after.txt', [1], kp(11, 0.1)), W), /kube-proxy restarted/);
  assert.throws(() => cpuWindow(a, kernel('load-after.txt', [0, 1]), W), /CPUs changed/);
  assert.throws(() => cpuWindow(kernel('load-after.txt', [1]), kernel('load-before.txt', [1]), W), /went backwards/);
});

const sample = (id: string, timeMs: number, k: KernelCpu | undefined): DataplaneSample =>
  DataplaneSample.fromPartial({ samplingJobId: id, timeMs, serversOnly: true, ...(k ? { kernelCpu: k } : {}) });

const tput = (round: number, gbps: number, seconds: number): JobResult =>
  JobResult.fromPartial({
    round,
    measurement: {
      kind: { $case: 'throughput', value: { protocol: 'tcp', streams: 1, seconds, bitsPerSecond: gbps * 1e9 } },
    },
  });

test('cpuCost: net CPU of both nodes per Gbit moved, one value per round', () => {
  const samples = new Map(
    [
      sample('cb0', 0, kernel('idle-before.txt', [0])),
      sample('cb1', W, kernel('idle-after.txt', [0])),
      sample('sb0', 0, kernel('idle-before.txt', [1])),
      sample('sb1', W, kernel('idle-after.txt', [1])),
      sample('c0', 10_000, kernel('load-before.txt', [0])),
      sample('c1', 10_000 + W, kernel('load-after.txt', [0])),
      sample('s0', 10_000, kernel('load-before.txt', [1])),
      sample('s1', 10_000 + W, kernel('load-after.txt', [1])),
    ].map((s) => [s.samplingJobId, s]),
  );
  const input = {
    results: [tput(0, 2, 2)],
    rounds: [{ client: { before: 'c0', after: 'c1' }, server: { before: 's0', after: 's1' } }],
    baseline: { client: { before: 'cb0', after: 'cb1' }, server: { before: 'sb0', after: 'sb1' } },
    sameNode: false,
    samples,
  };
  const c = cpuCost(input);
  assert.equal(c.missing, undefined);
  const net = (file: number, before: string, after: string, b0: string, b1: string) =>
    dataplaneCpu(
      netOfBaseline(
        cpuWindow(kernel(before, [file]), kernel(after, [file]), W),
        cpuWindow(kernel(b0, [file]), kernel(b1, [file]), W),
      ).cpu,
    );
  const client = net(0, 'load-before.txt', 'load-after.txt', 'idle-before.txt', 'idle-after.txt');
  const server = net(1, 'load-before.txt', 'load-after.txt', 'idle-before.txt', 'idle-after.txt');
  // 2 Gbit/s for 2 s: 4 Gbit.
  assert.equal(c.metric?.name, 'cpu-per-gbit');
  assert.equal(c.metric?.unit, 'CPU-s/Gbit');
  assert.ok(Math.abs((c.metric?.value ?? 0) - (client + server) / 4) < 1e-12);
  assert.deepEqual(c.cpu?.clientCpus, [0]);
  assert.deepEqual(c.cpu?.serverCpus, [1]);
  // Same node: the one node counted once.
  const same = cpuCost({ ...input, sameNode: true });
  assert.ok(Math.abs((same.metric?.value ?? 0) - client / 4) < 1e-12);
  // A sample without kernel CPU: no figure, and the reason.
  samples.set('s1', sample('s1', 10_000 + W, undefined));
  assert.match(cpuCost(input).missing ?? '', /round 0 server: no kernel CPU/);
});

test('cpuCost pools the pauses between rounds into the baseline (a drifting background is followed)', () => {
  // Chronological captures: idle-before, idle-after (+2 s), load-before (+0.3 s), load-after (+2 s).
  const at = { ib: 0, ia: 2000, lb: 2300, la: 4300 };
  const samples = new Map(
    (['ib', 'ia', 'lb', 'la'] as const).flatMap((k) => {
      const file = { ib: 'idle-before.txt', ia: 'idle-after.txt', lb: 'load-before.txt', la: 'load-after.txt' }[k];
      return [
        [`c-${k}`, sample(`c-${k}`, at[k], kernel(file, [0]))],
        [`s-${k}`, sample(`s-${k}`, at[k], kernel(file, [1]))],
      ] as const;
    }),
  );
  const pair = (a: string, b: string) => ({
    client: { before: `c-${a}`, after: `c-${b}` },
    server: { before: `s-${a}`, after: `s-${b}` },
  });
  const input = {
    results: [tput(0, 1, 2), tput(1, 1, 2)],
    rounds: [pair('ib', 'ia'), pair('lb', 'la')],
    baseline: pair('ib', 'ia'),
    sameNode: false,
    samples,
  };
  const w = (side: 'c' | 's', a: keyof typeof at, b: keyof typeof at) =>
    cpuWindow(
      (samples.get(`${side}-${a}`) as DataplaneSample).kernelCpu as KernelCpu,
      (samples.get(`${side}-${b}`) as DataplaneSample).kernelCpu as KernelCpu,
      at[b] - at[a],
    );
  const expected = (side: 'c' | 's', gaps: boolean) =>
    dataplaneCpu(
      netOfBaseline(w(side, 'lb', 'la'), pooled([w(side, 'ib', 'ia'), ...(gaps ? [w(side, 'ia', 'lb')] : [])])).cpu,
    );
  const withGaps = cpuCost(input);
  const without = cpuCost({ ...input, poolGaps: false });
  assert.ok(Math.abs((withGaps.metric?.perRound[1] ?? 0) - (expected('c', true) + expected('s', true)) / 2) < 1e-12);
  assert.ok(Math.abs((without.metric?.perRound[1] ?? 0) - (expected('c', false) + expected('s', false)) / 2) < 1e-12);
  assert.notEqual(withGaps.metric?.perRound[1], without.metric?.perRound[1]);
});

test('renderCpuCost: the per-unit figure with its interval, the split per side, or why there is none', async () => {
  const { renderCpuCost } = await import('../../../report/cpu-cost-render.js');
  const { summarise } = await import('../../../report/stats.js');
  const side = { system: 0.2, irq: 0, softirq: 0.05, unsampled: 0.007, user: 0.5, dataplaneUser: 0.01, agent: 0.003 };
  const base = reportRow({ id: 'a', path: 'pod-to-pod', tool: 'iperf3', value: 1, unit: 'Gbit/s', rounds: 3 });
  const lines = renderCpuCost([
    {
      ...base,
      measurement: 'TCP pod-to-pod',
      metrics: [
        {
          name: 'cpu-per-gbit',
          unit: 'CPU-s/Gbit',
          higherIsBetter: false,
          value: 0.26,
          perRound: [0.25, 0.26, 0.27],
          summary: summarise([0.25, 0.26, 0.27]),
          source: 'rounds-median',
        },
      ],
      cpu: { client: side, server: side, baseline: { client: side, server: side }, clientCpus: [1], serverCpus: [0] },
    },
    { ...base, measurement: 'TCP Service', metrics: [], cpuMissing: 'no idle CPU baseline in this run' },
  ]).join('\n');
  assert.match(lines, /## CPU per unit of work/);
  assert.match(
    lines,
    /\| TCP pod-to-pod \| 0\.260 CPU-s\/Gbit \| \[0\.235, 0\.285\] n=3 \| 200 \/ 50 \/ 7 \/ 10 \/ 3 \(CPUs 1\)/,
  );
  assert.match(lines, /\| TCP Service \| — \| — \| no idle CPU baseline in this run/);
  assert.deepEqual(renderCpuCost([{ ...base, measurement: 'x', metrics: [] }]), []);
});
