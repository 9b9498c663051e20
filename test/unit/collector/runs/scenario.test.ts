import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PATHS, parseScenario } from '../../../../collector/runs/scenario.js';
import { validationMessage as fieldOf } from '../../../support/helpers/errors.js';

test('an empty scenario gets the study matrix: every path at 1/8/16 streams, UDP, RPS, TCP_RR/CRR, fixed-rate latency', () => {
  const s = parseScenario({});
  const ids = s.measurements.map((m) => m.id);
  for (const path of PATHS) for (const p of [1, 8, 16]) assert.ok(ids.includes(`tput-${path}-p${p}`), `${path} p${p}`);
  for (const id of [
    'udp-pod-to-pod-1000m',
    'http-ka-pod-to-pod-c64',
    'http-ka-service-c64',
    'http-ka-service-c256',
    'http-sc-service-c64',
    'rr-pod-to-pod',
    'crr-pod-to-pod',
    'http-qps1000-service-c16',
    'http-qps1000-service-c16-open-loop',
  ]) {
    assert.ok(ids.includes(id), id);
  }
  assert.equal(new Set(ids).size, ids.length);
  assert.ok(s.measurements.every((m) => m.durationSeconds === 10 && m.warmupSeconds === 2 && m.rounds === 3));
  assert.deepEqual(
    s.measurements.filter((m) => m.tool !== 'auto').map((m) => m.tool),
    ['http-open-loop'],
  );
  assert.equal(s.measurementsDefaulted, true);
  assert.equal(s.roundSleepSeconds, 1);
  assert.ok(Object.isFrozen(s));
});

test('scenario durations and rounds apply to measurements that do not set their own', () => {
  const s = parseScenario({
    durationSeconds: 3,
    rounds: 5,
    measurements: [
      { kind: 'http', path: 'service', durationSeconds: 7, rounds: 2 },
      { kind: 'throughput', path: 'pod-to-pod' },
    ],
  });
  assert.deepEqual(
    s.measurements.map((m) => m.durationSeconds),
    [7, 3],
  );
  assert.deepEqual(
    s.measurements.map((m) => m.rounds),
    [2, 5],
  );
  assert.equal(s.measurementsDefaulted, false);
});

test("the study script's knobs override the scenario from the environment", () => {
  const env = { IPERF_DURATION: '4', FORTIO_DURATION: '6s', ROUNDS: '7', ROUND_SLEEP: '0' };
  const s = parseScenario(
    {
      durationSeconds: 3,
      rounds: 2,
      measurements: [
        { kind: 'throughput', path: 'pod-to-pod' },
        { kind: 'http', path: 'service', durationSeconds: 9 },
        { kind: 'rr', path: 'pod-to-pod' },
      ],
    },
    env,
  );
  assert.deepEqual(
    s.measurements.map((m) => m.durationSeconds),
    [4, 6, 6],
  );
  assert.deepEqual(
    s.measurements.map((m) => m.rounds),
    [7, 7, 7],
  );
  assert.equal(s.roundSleepSeconds, 0);
  assert.match(
    fieldOf(() => parseScenario({}, { ROUNDS: '0' })),
    /env ROUNDS/,
  );
  assert.match(
    fieldOf(() => parseScenario({}, { IPERF_DURATION: '-3' })),
    /env IPERF_DURATION/,
  );
  assert.match(
    fieldOf(() => parseScenario({}, { ROUND_SLEEP: 'soon' })),
    /env ROUND_SLEEP/,
  );
});

test('bad values name the field', () => {
  assert.match(
    fieldOf(() => parseScenario({ durationSeconds: -1 })),
    /durationSeconds/,
  );
  assert.match(
    fieldOf(() => parseScenario({ rounds: 0 })),
    /rounds/,
  );
  assert.match(
    fieldOf(() => parseScenario({ measurements: [{ kind: 'throughput', path: 'pod-to-pod', streams: 0 }] })),
    /measurements\[0\]\.streams/,
  );
  assert.match(
    fieldOf(() => parseScenario({ measurements: [{ kind: 'throughput', path: 'via-magic' }] })),
    /measurements\[0\]\.path/,
  );
  assert.match(
    fieldOf(() => parseScenario({ measurements: [{ kind: 'http', path: 'service', tool: 'ab' }] })),
    /measurements\[0\]\.tool/,
  );
  assert.match(
    fieldOf(() => parseScenario({ measurements: [{ kind: 'throughput', path: 'pod-to-pod', protocol: 'udp' }] })),
    /measurements\[0\]\.udpTargetMbps/,
  );
  assert.match(
    fieldOf(() => parseScenario({ measurements: [{ kind: 'http', path: 'service', tool: 'wrk', qps: 1000 }] })),
    /measurements\[0\]\.tool/,
  );
  assert.match(
    fieldOf(() => parseScenario({ measurements: [{ kind: 'rr', path: 'pod-to-pod', mode: 'crr', tool: 'sockperf' }] })),
    /measurements\[0\]\.tool/,
  );
  assert.match(
    fieldOf(() => parseScenario({ measurements: [{ kind: 'rr', path: 'pod-to-pod', connections: 0 }] })),
    /measurements\[0\]\.connections/,
  );
  assert.match(
    fieldOf(() => parseScenario({ measurements: [{ kind: 'http', path: 'service', tool: 'http-open-loop' }] })),
    /measurements\[0\]\.qps/,
  );
  assert.match(
    fieldOf(() => parseScenario({ bogus: 1 })),
    /bogus/,
  );
  assert.match(
    fieldOf(() => parseScenario('{not json')),
    /not valid JSON/,
  );
  assert.match(
    fieldOf(() => parseScenario({ serverNode: 'a', clientNode: 'a' })),
    /clientNode/,
  );
});

test('duplicate explicit ids are refused, implicit ones are numbered', () => {
  assert.match(
    fieldOf(() =>
      parseScenario({
        measurements: [
          { id: 'x', kind: 'throughput', path: 'service' },
          { id: 'x', kind: 'throughput', path: 'service' },
        ],
      }),
    ),
    /measurements\[1\]\.id/,
  );
  const s = parseScenario({
    measurements: [
      { kind: 'throughput', path: 'service' },
      { kind: 'throughput', path: 'service' },
    ],
  });
  assert.deepEqual(
    s.measurements.map((m) => m.id),
    ['tput-service-p1', 'tput-service-p1-2'],
  );
});

test('environment knobs keep the schema bounds; UDP through a Service is refused', () => {
  assert.match(
    fieldOf(() => parseScenario({}, { ROUNDS: '101' })),
    /env ROUNDS.*at most 100/,
  );
  assert.match(
    fieldOf(() => parseScenario({}, { ROUND_SLEEP: '601' })),
    /env ROUND_SLEEP.*at most 600/,
  );
  assert.match(
    fieldOf(() =>
      parseScenario({ measurements: [{ kind: 'throughput', path: 'service', protocol: 'udp', udpTargetMbps: 100 }] }),
    ),
    /measurements\[0\]\.path/,
  );
});
