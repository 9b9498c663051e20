/**
 * The agent's pure monitoring parts: which probes a round runs and when, the
 * wire protocol, error reasons, round outcomes and who probed us lately.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IncomingTracker } from '../../../../agent/monitor/incoming.js';
import { RoundOutcomes } from '../../../../agent/monitor/outcomes.js';
import { parseHttpAnswer } from '../../../../agent/monitor/probes.js';
import {
  helloLine,
  httpAnswer,
  ProbeFailure,
  parseHelloLine,
  parseHttpHead,
  parseProbeBody,
  probeErrorReason,
} from '../../../../agent/monitor/protocol.js';
import { nextRoundDelay, roundTasks, shuffle, spreadOffsets } from '../../../../agent/monitor/schedule.js';
import type { MonitorPlan } from '../../../../gen/cnibench/v1/agent.js';

const plan: MonitorPlan = {
  generation: 3,
  peers: [
    { nodeName: 'b', podIp: '198.18.17.10', probePort: 8478, hostIp: '198.18.0.2', hostProbePort: 8478, paused: false },
    { nodeName: 'c', podIp: '198.18.18.10', probePort: 8478, hostIp: '', hostProbePort: 0, paused: false },
    { nodeName: 'd', podIp: '198.18.19.10', probePort: 8478, hostIp: '198.18.0.4', hostProbePort: 8478, paused: true },
  ],
  service: { name: 'monitor-probe', ip: '198.19.0.10', port: 8478 },
  paused: false,
  pauseReason: '',
  servicePaused: false,
};

/** A deterministic random source. */
function lcg(seed = 1): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

test('a round probes every type of every peer not paused, host types only where the peer has a host responder, and the Service once', () => {
  const tasks = roundTasks(plan);
  assert.deepEqual(
    tasks.map((t) => `${t.type}>${t.target}@${t.host}`),
    [
      'tcp-connect>b@198.18.17.10',
      'tcp-rr>b@198.18.17.10',
      'host-tcp-connect>b@198.18.0.2',
      'host-tcp-rr>b@198.18.0.2',
      'tcp-connect>c@198.18.18.10',
      'tcp-rr>c@198.18.18.10',
      'http-service>@198.19.0.10',
    ],
  );
  assert.deepEqual(roundTasks({ ...plan, paused: true }), []);
  assert.ok(!roundTasks({ ...plan, servicePaused: true }).some((t) => t.type === 'http-service'));
  assert.deepEqual(roundTasks(undefined), []);
});

test('probe starts are spread one per slot over the spread window; rounds are jittered within bounds', () => {
  const offsets = spreadOffsets(10, 1000, lcg());
  for (const [i, o] of offsets.entries()) assert.ok(o >= i * 100 && o < (i + 1) * 100, `offset ${i}: ${o}`);
  assert.deepEqual(spreadOffsets(0, 1000, lcg()), []);
  const r = lcg(7);
  for (let i = 0; i < 1000; i++) {
    const d = nextRoundDelay(30_000, 0.1, r);
    assert.ok(d >= 27_000 && d <= 33_000, String(d));
  }
  assert.equal(nextRoundDelay(30_000, 0, r), 30_000);
  const s = shuffle([1, 2, 3, 4, 5], lcg(3));
  assert.deepEqual([...s].sort(), [1, 2, 3, 4, 5]);
});

test('hello lines and HTTP heads name the source node; anything else is refused', () => {
  assert.equal(helloLine('lab-n1'), 'CNIB1 lab-n1\n');
  assert.equal(parseHelloLine('CNIB1 lab-n1\n'), 'lab-n1');
  assert.equal(parseHelloLine('CNIB1 bad name\n'), undefined);
  assert.equal(parseHelloLine('HELLO x\n'), undefined);
  assert.throws(() => helloLine('a b'), ProbeFailure);
  assert.deepEqual(parseHttpHead('GET /probe?from=lab-n2 HTTP/1.1\r\nHost: x\r\n\r\n'), {
    path: '/probe',
    from: 'lab-n2',
  });
  assert.deepEqual(parseHttpHead('GET /other HTTP/1.0\r\n\r\n'), { path: '/other', from: undefined });
  assert.throws(() => parseHttpHead('SSH-2.0\r\n\r\n'), ProbeFailure);
  assert.equal(parseHttpAnswer(httpAnswer('GET /probe?from=x HTTP/1.1\r\n\r\n', 'lab-n3')), 'lab-n3');
  assert.throws(
    () => parseHttpAnswer(httpAnswer('GET /nope HTTP/1.1\r\n\r\n', 'n')),
    (e) => e instanceof ProbeFailure && e.reason === 'http-status',
  );
  assert.throws(
    () => parseHttpAnswer(httpAnswer('PUT / HTTP/1.1\r\n\r\n', 'n')),
    (e) => e instanceof ProbeFailure && e.reason === 'http-status',
  );
  assert.throws(
    () => parseProbeBody('{"node":7}'),
    (e) => e instanceof ProbeFailure && e.reason === 'bad-response',
  );
});

test('errors map to a closed set of reasons', () => {
  const e = (code: string) => Object.assign(new Error(code), { code });
  assert.equal(probeErrorReason(e('ETIMEDOUT')), 'timeout');
  assert.equal(probeErrorReason(e('ECONNREFUSED')), 'refused');
  assert.equal(probeErrorReason(e('EHOSTUNREACH')), 'unreachable');
  assert.equal(probeErrorReason(e('ENETUNREACH')), 'unreachable');
  assert.equal(probeErrorReason(e('ECONNRESET')), 'reset');
  assert.equal(probeErrorReason(new ProbeFailure('wrong-node', 'x')), 'wrong-node');
  assert.equal(probeErrorReason(new Error('??')), 'other');
});

test('round outcomes: successes with a mergeable histogram, failures with the last reason, who answered the Service', () => {
  const o = new RoundOutcomes();
  o.ok('tcp-rr', 'b', 120);
  o.ok('tcp-rr', 'b', 80);
  o.fail('tcp-connect', 'b', 'timeout');
  o.ok('http-service', '', 900, 'c');
  const list = o.list();
  const rr = list.find((x) => x.type === 'tcp-rr');
  assert.equal(rr?.ok, 2);
  assert.equal(rr?.latency?.total, 2);
  assert.equal(list.find((x) => x.type === 'tcp-connect')?.errorReason, 'timeout');
  assert.equal(list.find((x) => x.type === 'tcp-connect')?.latency, undefined);
  assert.deepEqual(list.find((x) => x.type === 'http-service')?.answeredBy, ['c']);
  assert.deepEqual([...o.failingTargets()], ['b']);
});

test('incoming sources are those seen within the window; older ones are forgotten', () => {
  const t = new IncomingTracker(3);
  t.record('a', 0);
  t.record('b', 500);
  t.record('a', 900);
  assert.deepEqual(t.sources(1000, 600), ['a', 'b']);
  assert.deepEqual(t.sources(1200, 600), ['a']);
  t.record('c', 1200);
  t.record('d', 1200);
  t.record('e', 1200);
  assert.deepEqual(t.sources(1200, 600), ['a', 'c', 'd'], 'bounded');
});
