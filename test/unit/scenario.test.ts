import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validationMessage as fieldOf } from '../helpers/errors.js';
import { parseScenario } from '../../collector/runs/scenario.js';

test('an empty scenario gets the study defaults with ids and durations', () => {
  const s = parseScenario({});
  assert.equal(s.measurements.length, 6);
  assert.deepEqual(
    s.measurements.map((m) => m.id),
    ['tput-pod-to-pod-p1', 'tput-pod-to-pod-p8', 'tput-service-p8', 'http-ka-pod-to-pod-c64', 'http-ka-service-c64', 'http-sc-service-c64'],
  );
  assert.ok(s.measurements.every((m) => m.durationSeconds === 10 && m.warmupSeconds === 2));
  assert.deepEqual(s.measurements.map((m) => m.tool), ['iperf3', 'iperf3', 'iperf3', 'wrk', 'wrk', 'wrk']);
  assert.deepEqual(s.measurements.map((m) => (m.kind === 'http' ? `${m.mode}/${m.connections}/${m.server}` : m.streams)), [1, 8, 8, 'keepalive/64/http-echo', 'keepalive/64/http-echo', 'short-connection/64/http-echo']);
  assert.ok(Object.isFrozen(s));
});

test('scenario durations apply to measurements that do not set their own', () => {
  const s = parseScenario({ durationSeconds: 3, measurements: [{ kind: 'http', path: 'service', durationSeconds: 7 }, { kind: 'throughput', path: 'pod-to-pod' }] });
  assert.deepEqual(s.measurements.map((m) => m.durationSeconds), [7, 3]);
});

test('bad values name the field', () => {
  assert.match(fieldOf(() => parseScenario({ durationSeconds: -1 })), /durationSeconds/);
  assert.match(fieldOf(() => parseScenario({ measurements: [{ kind: 'throughput', path: 'pod-to-pod', streams: 0 }] })), /measurements\[0\]\.streams/);
  assert.match(fieldOf(() => parseScenario({ measurements: [{ kind: 'throughput', path: 'via-magic' }] })), /measurements\[0\]\.path/);
  assert.match(fieldOf(() => parseScenario({ measurements: [{ kind: 'http', path: 'service', tool: 'ab' }] })), /measurements\[0\]\.tool/);
  assert.match(fieldOf(() => parseScenario({ bogus: 1 })), /bogus/);
  assert.match(fieldOf(() => parseScenario('{not json')), /not valid JSON/);
  assert.match(fieldOf(() => parseScenario({ serverNode: 'a', clientNode: 'a' })), /clientNode/);
});

test('duplicate explicit ids are refused, implicit ones are numbered', () => {
  assert.match(fieldOf(() => parseScenario({ measurements: [{ id: 'x', kind: 'throughput', path: 'service' }, { id: 'x', kind: 'throughput', path: 'service' }] })), /measurements\[1\]\.id/);
  const s = parseScenario({ measurements: [{ kind: 'throughput', path: 'service' }, { kind: 'throughput', path: 'service' }] });
  assert.deepEqual(s.measurements.map((m) => m.id), ['tput-service-p1', 'tput-service-p1-2']);
});
