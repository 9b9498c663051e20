import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inBenchmarkRange, labIdOf, planAddresses, planLab } from '../../../lab/plan.js';

test('every address of a large lab is inside 198.18.0.0/15 and unique per interface', () => {
  const plan = planLab('abcd1234', 200, 3);
  const addrs = planAddresses(plan);
  assert.ok(
    addrs.every(inBenchmarkRange),
    addrs.find((a) => !inBenchmarkRange(a)),
  );
  const own = plan.nodes.flatMap((n) => [n.underlayIp, n.bridgeIp, ...n.pods.map((p) => p.ip)]);
  assert.equal(new Set(own).size, own.length);
});

test('nodes route to every other node and to nothing else', () => {
  const plan = planLab('abcd', 3);
  for (const n of plan.nodes) {
    assert.equal(n.routes.length, 2);
    assert.ok(!n.routes.some((r) => r.dst === n.podCidr));
    assert.ok(n.routes.every((r) => r.dst !== 'default' && inBenchmarkRange(r.dst.split('/')[0] ?? '')));
  }
});

test('namespace names carry the lab prefix and id, and parse back', () => {
  const plan = planLab('f00dcafe', 2);
  assert.equal(plan.fabricNs, 'cnib-f00dcafe-fab');
  assert.equal(plan.nodes[1]?.pods[0]?.ns, 'cnib-f00dcafe-n1-p0');
  assert.equal(labIdOf('cnib-f00dcafe-n1-p0'), 'f00dcafe');
  assert.equal(labIdOf('other-ns'), undefined);
});

test('bad sizes are refused naming the field', () => {
  assert.throws(() => planLab('abcd', 0), /nodes: must be an integer from 1 to 200/);
  assert.throws(() => planLab('abcd', 201), /nodes/);
  assert.throws(() => planLab('ABC!', 2), /lab id/);
});

test('the benchmark range check rejects neighbours', () => {
  assert.ok(inBenchmarkRange('198.19.255.255'));
  assert.ok(!inBenchmarkRange('198.20.0.1'));
  assert.ok(!inBenchmarkRange('198.17.0.1'));
  assert.ok(!inBenchmarkRange('10.0.0.1'));
});
