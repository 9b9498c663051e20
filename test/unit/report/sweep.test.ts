import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phasesOf } from '../../../collector/runs/phases.js';
import { parseScenario } from '../../../collector/runs/scenario.js';
import { aboveBaseline, checkSync } from '../../../collector/runs/sync.js';
import type { PhaseRecord } from '../../../collector/store/store.js';
import { DataplaneSample } from '../../../gen/cnibench/v1/agent.js';
import type { ReportRow } from '../../../report/report.js';
import { buildSweep, compareSweeps, crossover } from '../../../report/sweep.js';
import { validationMessage } from '../../support/helpers/errors.js';
import { reportRow } from '../../support/helpers/report-rows.js';

test("a sweep scenario gets the study's steps and RPS via Service at each step", () => {
  const s = parseScenario({ serviceScale: {} });
  assert.deepEqual(s.serviceScale?.steps, [0, 5000, 10_000, 20_000, 30_000]);
  assert.equal(s.serviceScale?.endpointsPerService, 4);
  assert.deepEqual(
    s.measurements.map((m) => m.id),
    ['http-ka-service-c64', 'http-sc-service-c64', 'crr-service'],
  );
  const phases = phasesOf(s);
  assert.equal(phases.length, 20);
  assert.deepEqual(
    phases.slice(0, 4).map((p) => p.name),
    [
      'program 0 Services',
      'HTTP keepalive c64 service @ 0 Services',
      'HTTP short-connection c64 service @ 0 Services',
      'TCP_CRR service @ 0 Services',
    ],
  );
  assert.equal(phases[16]?.name, 'program 30,000 Services');
});

test('sweep input errors name the field', () => {
  assert.match(
    validationMessage(() => parseScenario({ serviceScale: { steps: [0, 5000, 5000] } })),
    /serviceScale\.steps\[2\]: steps must increase/,
  );
  assert.match(
    validationMessage(() => parseScenario({ serviceScale: { steps: [0, -1] } })),
    /serviceScale\.steps\[1\]/,
  );
  assert.match(
    validationMessage(() => parseScenario({ serviceScale: { endpointsPerService: 0 } })),
    /serviceScale\.endpointsPerService/,
  );
  assert.match(
    validationMessage(() => parseScenario({ serviceScale: {}, measurements: [{ kind: 'http', path: 'pod-to-pod' }] })),
    /measurements\[0\]\.path/,
  );
  assert.match(
    validationMessage(() => parseScenario({ serviceScale: { stepz: [1] } })),
    /serviceScale/,
  );
});

test('a plain scenario still lays out one phase per measurement', () => {
  const s = parseScenario({});
  assert.equal(phasesOf(s).length, s.measurements.length);
  assert.ok(phasesOf(s).every((p) => p.kind === 'measure'));
});

const one = (xs: (number | null)[]) => xs.map((x) => (x === null ? null : [x]));

// Values of the reference study's table measured on this machine (../shared/reference.md, section 4):
// iptables 13.4k/5.5k/3.8k/2.1k/1.5k, nftables 11.5k/11.9k/-/11.7k/-, one round each. Worked by hand:
// at 0 iptables leads by 16.5% (over the 15% a single round needs), from 5,000 on nftables leads; the
// difference goes from +1.9k to -6.4k, so the linear estimate is 0 + 5000 * 1.9 / 8.3 = 1,145.
test('crossover: where nftables overtakes iptables for good, with a linear estimate', () => {
  const steps = [0, 5000, 10_000, 20_000, 30_000];
  const x = crossover(
    steps,
    'iptables',
    one([13.4, 5.5, 3.8, 2.1, 1.5]),
    'nftables',
    one([11.5, 11.9, null, 11.7, null]),
  );
  assert.deepEqual(x.between, [0, 5000]);
  assert.equal(x.estimate, 1145);
  assert.equal(
    x.text,
    'nftables overtakes iptables between 0 and 5,000 Services (linear estimate 1,145) and stays ahead (one round at some steps: ahead only by over 15%; 2 of 5 steps lack a value for one of them)',
  );
});

// The lab sweep of this session (short connections, req/s): iptables 4,370/4,764/3,999/2,770/1,667,
// nftables 4,729/4,585/5,254/5,405/5,218, one round each. Steps 0 and 5,000 are ties (8% and 4%), so an early flip
// of noise must not count: nftables takes the lead it keeps between 5,000 and 10,000. Differences
// +179 and -1,255 give 5000 + 5000 * 179 / 1434 = 5,624.
test('crossover: ties at the start do not count, the lasting lead does', () => {
  const steps = [0, 5000, 10_000, 20_000, 30_000];
  const x = crossover(
    steps,
    'iptables',
    one([4370, 4764, 3999, 2770, 1667]),
    'nftables',
    one([4729, 4585, 5254, 5405, 5218]),
  );
  assert.deepEqual(x.between, [5000, 10_000]);
  assert.equal(x.estimate, 5624);
});

test('crossover: a lead held at every step, a tie at the end, and no data', () => {
  const steps = [0, 10, 20, 30];
  assert.equal(
    crossover(steps, 'a', one([5, 5, 5, 5]), 'b', one([1, 2, 3, 4])).text,
    'a is ahead of b at every step compared (0 to 30 Services; one round at some steps: ahead only by over 15%)',
  );
  assert.match(
    crossover(steps, 'a', one([5, 5, 5, 5]), 'b', one([1, 2, 3, 4.9])).text,
    /within noise of each other at 30 Services/,
  );
  const x = crossover(steps, 'a', one([10, 8, null, 4]), 'b', one([5, 6, 7, 8]));
  assert.deepEqual(x.between, [10, 30]);
  assert.equal(x.estimate, 10 + Math.round((20 * 2) / 6));
  assert.equal(crossover(steps, 'a', one([null, null, null, null]), 'b', one([1, 2, 3, 4])).between, null);
});

// With rounds, a lead needs a significant difference, not a large one: medians 12% apart whose rounds
// scatter (intervals overlap) are a tie; 12% apart with tight rounds is a lead.
test('crossover: with rounds, only a significant difference is a lead', () => {
  const steps = [0, 10];
  const noisy = crossover(
    steps,
    'a',
    [
      [100, 130, 70],
      [100, 130, 70],
    ],
    'b',
    [
      [88, 90, 86],
      [88, 90, 86],
    ],
  );
  assert.match(
    noisy.text,
    /^a and b are within noise of each other at 10 Services \(ahead only where the rounds differ significantly: Welch p < 0\.05, disjoint 95% intervals, over 3%\)$/,
  );
  const tight = crossover(
    steps,
    'a',
    [
      [88, 90, 86],
      [100, 101, 99],
    ],
    'b',
    [
      [88, 89, 87],
      [88, 89, 87],
    ],
  );
  assert.deepEqual(tight.between, [0, 10]);
  assert.match(tight.text, /^a overtakes b between 0 and 10 Services/);
});

function phase(index: number, detail: unknown, state: PhaseRecord['state'] = 'succeeded'): PhaseRecord {
  return { runId: 'r', index, name: `p${index}`, state, error: '', startedMs: 0, endedMs: 0, detail };
}
function row(measurement: string, value: number | null): ReportRow {
  return reportRow({ measurement, value, rounds: 1 });
}

test('the sweep table takes steps from scale phases and values from the measurements at each step', () => {
  const m = { id: 'http-sc-service-c64' };
  const phases = [
    phase(0, {
      scale: { services: 0 },
      programmingMs: 10,
      syncMs: 5,
      nodes: { a: { kubeServicesRules: 2, nftServiceIps: null }, b: { kubeServicesRules: 1, nftServiceIps: null } },
    }),
    phase(1, { measurement: m, step: 0 }),
    phase(2, {
      scale: { services: 100 },
      programmingMs: 300,
      syncMs: 7,
      nodes: { a: { kubeServicesRules: 102, nftServiceIps: null } },
    }),
    phase(3, { measurement: m, step: 100 }),
  ];
  const rows = [
    row('program 0', null),
    row('HTTP sc @ 0 Services', 1000),
    row('program 100', null),
    row('HTTP sc @ 100 Services', 400),
  ];
  const t = buildSweep(phases, rows);
  assert.ok(t);
  assert.deepEqual(
    t.steps.map((s) => [s.services, s.programmingMs, s.syncMs, s.kubeServicesRules]),
    [
      [0, 10, 5, 1],
      [100, 300, 7, 102],
    ],
  );
  assert.equal(t.series.length, 1);
  assert.equal(t.series[0]?.label, 'HTTP sc');
  assert.deepEqual(t.series[0]?.values, [1000, 400]);
  assert.deepEqual(
    t.series[0]?.change.map((c) => (c === null ? null : Math.round(c * 100))),
    [0, -60],
  );
  assert.equal(buildSweep([phase(0, { measurement: m })], [row('x', 1)]), undefined);

  assert.deepEqual(t.series[0]?.rounds, [[1000], [400]], 'rows without metrics give their value as one round');
  const other = {
    steps: t.steps,
    series: [{ ...t.series[0]!, values: [900, 880], rounds: [[900], [880]], change: [0, -880 / 900 + 0] }],
  };
  const c = compareSweeps([
    { label: 'iptables', sweep: t },
    { label: 'nftables', sweep: other },
  ]);
  assert.deepEqual(c.steps, [0, 100]);
  assert.equal(
    c.series[0]?.crossovers[0]?.text,
    'nftables overtakes iptables between 0 and 100 Services (linear estimate 17) and stays ahead (one round at some steps: ahead only by over 15%)',
  );
});

test('sync: a node is caught up only when its sample shows the expected count and the read worked', () => {
  const s = (over: Partial<DataplaneSample>) => DataplaneSample.fromPartial({ kubeServicesRules: 5001, ...over });
  assert.equal(checkSync(s({}), { kubeServicesRules: 5001 }).ok, true);
  assert.match(
    checkSync(s({ kubeServicesRules: 4000 }), { kubeServicesRules: 5001 }).why,
    /KUBE-SERVICES has 4000 of 5001 rules/,
  );
  assert.match(
    checkSync(s({ errors: ['iptables: timed out'] }), { kubeServicesRules: 5001 }).why,
    /iptables: timed out/,
  );
  assert.equal(checkSync(s({ nftServiceIps: 10 }), { nftServiceIps: 10 }).ok, true);
  assert.match(checkSync(s({}), { nftServiceIps: 10 }).why, /service-ips has no map of 10/);
  assert.match(checkSync(undefined, { nftServiceIps: 1 }).why, /no sample/);
});

test('sync above a baseline: a cluster node must gain the step over its own count, in the mode it shows', () => {
  assert.deepEqual(aboveBaseline({ kubeServicesRules: 57 }, 300), { kubeServicesRules: 357 });
  assert.deepEqual(aboveBaseline({ kubeServicesRules: 3, nftServiceIps: 40 }, 300), { nftServiceIps: 340 });
  assert.deepEqual(aboveBaseline(undefined, 10), { kubeServicesRules: 10 });
});

test('a sweep series takes the rate of a latency-headed row (TCP_CRR connections per second)', () => {
  const m = { id: 'crr-service' };
  const metric = (name: 'p50' | 'tps', value: number, higherIsBetter: boolean) => ({
    name,
    unit: name === 'tps' ? 'trans/s' : 'us',
    higherIsBetter,
    value,
    perRound: [value],
    summary: null,
    source: 'rounds-median' as const,
  });
  const crr = (p50: number, tps: number): ReportRow => ({
    ...row('TCP_CRR service @ 0 Services', p50),
    unit: 'us',
    metrics: [metric('p50', p50, false), metric('tps', tps, true)],
  });
  const phases = [
    phase(0, { scale: { services: 0 } }),
    phase(1, { measurement: m, step: 0 }),
    phase(2, { scale: { services: 100 } }),
    phase(3, { measurement: m, step: 100 }),
  ];
  const t = buildSweep(phases, [row('program', null), crr(200, 5000), row('program', null), crr(400, 2500)]);
  assert.deepEqual(t?.series[0]?.values, [5000, 2500]);
  assert.equal(t?.series[0]?.unit, 'trans/s');
  assert.deepEqual(t?.series[0]?.change, [0, -0.5]);
});
