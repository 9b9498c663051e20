import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCiliumFeatures } from '../../../../agent/observe/cilium-features.js';
import { kubeRouterArgs } from '../../../../lab/policy/enforcer.js';
import { ROLE_LABEL, RUN_LABEL, runPolicies } from '../../../../lab/policy/objects.js';
import { classifyProbe, probeArgv } from '../../../../lab/policy/probe.js';
import { fixture } from '../../../support/helpers/fixtures.js';

const exitOf = (name: string): number => Number(fixture(`policy/${name}.exit`).replace('exit ', ''));

test('the probe outcome comes from real captures of the probe: refused, dropped (timeout) and unreachable', () => {
  for (const [name, want] of [
    ['probe-refused', 'refused'],
    ['probe-dropped', 'timeout'],
    ['probe-unreachable', 'unreachable'],
  ] as const)
    assert.equal(classifyProbe(exitOf(name), fixture(`policy/${name}.stderr`)), want, name);
  assert.equal(classifyProbe(0, ''), 'connected');
});

test('the probe is a constant script with the address and port as arguments', () => {
  const argv = probeArgv('cnib-x-n1-p1', '198.18.17.10', 39_099, 300);
  assert.deepEqual(argv.slice(0, 5), ['netns', 'exec', 'cnib-x-n1-p1', 'timeout', '0.300']);
  assert.equal(argv[7], 'exec 3<>"/dev/tcp/$0/$1"');
  assert.deepEqual(argv.slice(8), ['198.18.17.10', '39099']);
});

test('N policies: N-1 fillers first, the one that lets the clients in last, all with the run label', () => {
  assert.deepEqual(runPolicies('cni-bench', 'r1', 0), []);
  const ps = runPolicies('cni-bench', 'r1', 3);
  assert.equal(ps.length, 3);
  assert.deepEqual(
    ps.map((p) => p.metadata?.name),
    ['cnib-r1-filler-1', 'cnib-r1-filler-2', 'cnib-r1-allow-client'],
  );
  for (const p of ps) {
    assert.equal(p.metadata?.labels?.[RUN_LABEL], 'r1');
    assert.deepEqual(p.spec?.podSelector?.matchLabels, { [ROLE_LABEL]: 'server' });
    assert.deepEqual(p.spec?.policyTypes, ['Ingress']);
  }
  const allow = ps[2]?.spec?.ingress?.[0];
  assert.deepEqual(allow?._from?.[0]?.podSelector?.matchLabels, { [ROLE_LABEL]: 'client' });
  assert.equal(allow?.ports, undefined);
  // A filler never admits a real pod: its source label is on no pod.
  assert.deepEqual(ps[0]?.spec?.ingress?.[0]?._from?.[0]?.podSelector?.matchLabels, {
    'cni-bench.io/policy-filler': 'f1',
  });
});

test('kube-router runs as a policy controller only', () => {
  const a = kubeRouterArgs('lab-n0', '/k.conf');
  for (const f of ['--run-firewall=true', '--run-router=false', '--run-service-proxy=false', '--enable-cni=false'])
    assert.ok(a.includes(f), f);
  assert.ok(a.includes('--hostname-override=lab-n0'));
  assert.ok(a.includes('--kubeconfig=/k.conf'));
});

test("Hubble and encryption state come from the agent's real GET /v1/debuginfo; a truncated body is a parse error naming the API", () => {
  assert.deepEqual(parseCiliumFeatures(fixture('cilium/api-debuginfo.json')), {
    hubble: 'Disabled',
    seenFlows: null,
    encryption: 'Disabled',
  });
  assert.throws(
    () => parseCiliumFeatures(fixture('cilium/api-debuginfo-truncated.json')),
    (err: Error) => /cilium-agent API/.test(err.message),
  );
  assert.throws(() => parseCiliumFeatures('{}'), /no cilium-status\.hubble\.state/);
});
