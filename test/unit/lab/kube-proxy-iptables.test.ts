import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseIptablesSave } from '../../../agent/samplers/iptables-save.js';
import {
  base32,
  type LabService,
  renderBase,
  renderEndpointsChange,
  renderServicesAdd,
  renderServicesDelete,
  sepChain,
  svcChain,
} from '../../../lab/kube-proxy-iptables.js';
import { COMPARED_SERVICES } from '../../support/harness/kube-proxy-objects.js';
import { fixture } from '../../support/helpers/fixtures.js';

const svc1: LabService = {
  namespace: 'ns1',
  name: 'svc1',
  portName: 'p80',
  clusterIp: '10.20.30.41',
  port: 80,
  protocol: 'tcp',
  endpoints: [{ ip: '10.180.0.1', port: 80 }],
};

test('chain names match the ones kube-proxy writes for the same service (values from kube-proxy proxier tests)', () => {
  assert.equal(svcChain(svc1), 'KUBE-SVC-XPGD46QRK7WJZT7O');
  assert.equal(sepChain(svc1, { ip: '10.180.0.1', port: 80 }), 'KUBE-SEP-SXIVWICOYRO3J4NJ');
});

test('base32 follows RFC 4648 test vectors', () => {
  assert.equal(base32(Buffer.from('')), '');
  assert.equal(base32(Buffer.from('f')), 'MY======');
  assert.equal(base32(Buffer.from('foobar')), 'MZXW6YTBOI======');
});

test('endpoint selection uses probabilities 1/n, 1/(n-1), ... and the last endpoint takes the rest', () => {
  const s = { ...svc1, endpoints: [1, 2, 3, 4].map((i) => ({ ip: `198.18.16.${i}`, port: 8080 })) };
  const text = renderServicesAdd([s], '198.18.16.0/20');
  const probs = [...text.matchAll(/--probability (\S+)/g)].map((m) => Number(m[1]));
  assert.deepEqual(
    probs,
    [0.25, 1 / 3, 0.5].map((p) => Number(p.toFixed(10))),
  );
  assert.deepEqual(
    [...text.matchAll(/--probability (\S+)/g)].map((m) => m[1]),
    ['0.2500000000', '0.3333333333', '0.5000000000'],
    "kube-proxy's %0.10f",
  );
  const jumps = text.split('\n').filter((l) => l.startsWith(`-A ${svcChain(s)}`) && l.includes('-j KUBE-SEP-'));
  assert.equal(jumps.length, 4);
  assert.ok(!jumps[3]?.includes('statistic'));
  assert.equal((text.match(/-j DNAT --to-destination 198\.18\.16\.\d:8080/g) ?? []).length, 4);
  assert.match(text, /^-I KUBE-SERVICES 1 -d 10\.20\.30\.41\/32 -p tcp .*--dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O$/m);
});

test('delete removes the KUBE-SERVICES rule before flushing and deleting the chains', () => {
  const text = renderServicesDelete([svc1]);
  const lines = text.split('\n');
  const del = lines.findIndex((l) => l.startsWith('-D KUBE-SERVICES'));
  const flush = lines.indexOf('-F KUBE-SVC-XPGD46QRK7WJZT7O');
  const drop = lines.indexOf('-X KUBE-SEP-SXIVWICOYRO3J4NJ');
  assert.ok(del > 0 && flush > del && drop > flush, text);
});

test('an endpoint change is one nat transaction: the Service chain declared again (flushed) and refilled, the gone endpoint chain deleted, KUBE-SERVICES untouched', () => {
  const two = { ...svc1, endpoints: [...svc1.endpoints, { ip: '10.180.0.2', port: 80 }] };
  const text = renderEndpointsChange(two, svc1, '10.0.0.0/8');
  const lines = text.trim().split('\n');
  assert.deepEqual([lines[0], lines.at(-1)], ['*nat', 'COMMIT']);
  assert.equal(lines.filter((l) => l === 'COMMIT').length, 1, 'one transaction');
  assert.ok(lines.includes(`:${svcChain(svc1)} - [0:0]`), 'the Service chain declared again: --noflush flushes it');
  const gone = sepChain(two, { ip: '10.180.0.2', port: 80 });
  const kept = sepChain(svc1, { ip: '10.180.0.1', port: 80 });
  assert.ok(lines.indexOf(`-F ${gone}`) > 0 && lines.indexOf(`-X ${gone}`) > lines.indexOf(`-F ${gone}`));
  assert.ok(!lines.some((l) => l.includes(`-X ${kept}`)));
  assert.ok(!lines.some((l) => l.includes('KUBE-SERVICES')), 'the Service stays in KUBE-SERVICES');
  // What is left for the Service is what adding it with one endpoint writes, minus its KUBE-SERVICES rule.
  const added = renderServicesAdd([svc1], '10.0.0.0/8')
    .split('\n')
    .filter((l) => l.startsWith('-A '));
  assert.deepEqual(
    lines.filter((l) => l.startsWith('-A ')),
    added,
  );
  assert.ok(!text.includes('--probability'), 'one endpoint left: no random pick');
});

test("the base has kube-proxy's filter table: KUBE-FORWARD for every forwarded packet, ctstate NEW jumps, the localnet guard", () => {
  const base = renderBase();
  const filter = base.slice(base.indexOf('*filter'), base.indexOf('*nat'));
  assert.match(filter, /^-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD$/m);
  assert.match(filter, /^-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP$/m);
  assert.match(filter, /^-A KUBE-FORWARD .*--ctstate RELATED,ESTABLISHED -j ACCEPT$/m);
  assert.match(filter, /^-A INPUT -j KUBE-FIREWALL$/m);
  assert.equal((filter.match(/^-A (INPUT|FORWARD|OUTPUT) /gm) ?? []).length, 11);
  assert.match(base, /^-A KUBE-SERVICES .*--dst-type LOCAL -j KUBE-NODEPORTS$/m);
});

// test/fixtures/kube-proxy-real/iptables-save.txt: the real kube-proxy v1.37.2 for COMPARED_SERVICES (see its README).
test("the agent's parser reads the real kube-proxy's iptables-save, whose chains are the ones the emulation names", () => {
  const s = parseIptablesSave(fixture('kube-proxy-real/iptables-save.txt'));
  assert.equal(s.kubeServicesRules, COMPARED_SERVICES.length + 1);
  const want = COMPARED_SERVICES.flatMap((svc) => [svcChain(svc), ...svc.endpoints.map((ep) => sepChain(svc, ep))]);
  assert.deepEqual(s.serviceChains.map((c) => c.chain).sort(), want.sort());
  assert.ok(s.tables.filter?.chains['KUBE-FORWARD'], 'the filter table is there');
  assert.equal(s.tables.nat?.chains['KUBE-MARK-MASQ']?.rules, 1);
});
