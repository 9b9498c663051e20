import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConntrackCount, parseSysctlNumber } from '../../../../agent/samplers/conntrack.js';
import { parseIptablesSave } from '../../../../agent/samplers/iptables-save.js';
import { parseListeningPorts } from '../../../../agent/samplers/proc-net-tcp.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { fixture } from '../../../support/helpers/fixtures.js';

for (const backend of ['nft', 'legacy']) {
  test(`iptables-save -c of a kube-proxy node (${backend} backend): rule counts and service chains`, () => {
    const s = parseIptablesSave(fixture(`iptables-save-kube-proxy-${backend}.txt`));
    assert.equal(s.totalRules, 16);
    assert.equal(s.kubeServicesRules, 2);
    assert.equal(s.tables.nat?.chains.PREROUTING?.policy, 'ACCEPT');
    assert.deepEqual(s.serviceChains.map((c) => c.chain).sort(), [
      'KUBE-SEP-5UINSWUIC2HODFYB',
      'KUBE-SEP-SONGZQVEG6ZH2UM7',
      'KUBE-SVC-CDGGSHYLG3RE2FKL',
    ]);
  });
}

test('counters are summed per chain (traffic was sent through the nft fixture)', () => {
  const s = parseIptablesSave(fixture('iptables-save-kube-proxy-nft.txt'));
  const c = Object.fromEntries(s.serviceChains.map((x) => [x.chain, x]));
  assert.equal(c['KUBE-SEP-5UINSWUIC2HODFYB']?.packets, 2325);
  assert.equal(c['KUBE-SEP-SONGZQVEG6ZH2UM7']?.packets, 2375);
  assert.equal(c['KUBE-SVC-CDGGSHYLG3RE2FKL']?.bytes, 139500 + 142500);
});

test('output without counters and an empty ruleset parse', () => {
  const s = parseIptablesSave(fixture('iptables-save-nat-nocounters-nft.txt'));
  assert.equal(s.kubeServicesRules, 2);
  assert.ok(s.serviceChains.every((c) => c.packets === 0));
  assert.deepEqual(parseIptablesSave(fixture('iptables-save-empty.txt')), {
    tables: {},
    totalRules: 0,
    kubeServicesRules: 0,
    serviceChains: [],
  });
});

test('a truncated dump is an error, never a smaller ruleset', () => {
  assert.throws(
    () => parseIptablesSave(fixture('iptables-save-truncated.txt')),
    (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('iptables-save: cannot parse output'),
  );
  assert.throws(
    () => parseIptablesSave(fixture('iptables-save-badtable.stderr')),
    (err) => isCniBenchError(err, 'E_PARSE'),
  );
});

test('listening ports from /proc/net/tcp and tcp6', () => {
  assert.deepEqual([...parseListeningPorts(fixture('proc-net-tcp.txt'))].sort(), [8080, 8083]);
  assert.deepEqual([...parseListeningPorts(fixture('proc-net-tcp6.txt'))], [5201]);
  assert.equal(parseListeningPorts('').size, 0);
  assert.throws(
    () => parseListeningPorts('garbage\n'),
    (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('/proc/net/tcp'),
  );
});

test('conntrack count and maximum', () => {
  assert.equal(parseConntrackCount(fixture('conntrack-count.txt')), 4537);
  assert.equal(parseSysctlNumber('net.netfilter.nf_conntrack_max', fixture('sysctl-nf-conntrack-max.txt')), 262144);
  assert.throws(
    () => parseConntrackCount('conntrack v1.4.7 (conntrack-tools): Operation failed\n'),
    (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('conntrack:'),
  );
});
