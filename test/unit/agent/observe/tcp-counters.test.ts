import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProcNetPairs, TCP_COUNTERS, tcpCountersOf } from '../../../../agent/observe/tcp-counters.js';
import { fixture } from '../../../support/helpers/fixtures.js';

const obs = (name: string): string => fixture(`observe/${name}`);

test('tcpCountersOf reads every selected counter of a real snmp and netstat, by nstat name', () => {
  const c = tcpCountersOf(obs('snmp-host.txt'), obs('netstat-host.txt'));
  assert.deepEqual(Object.keys(c).sort(), [...TCP_COUNTERS].sort());
  for (const v of Object.values(c)) assert.ok(Number.isSafeInteger(v) && v >= 0);
  assert.ok((c.TcpActiveOpens ?? 0) > 0);
});

test('the server namespace after a Service phase that followed a pod-IP phase counts the PAWS refusals, the client the SYN retransmissions', () => {
  const before = {
    s: tcpCountersOf(obs('snmp-server-before-paws.txt'), obs('netstat-server-before-paws.txt')),
    c: tcpCountersOf(obs('snmp-client-before-paws.txt'), obs('netstat-client-before-paws.txt')),
  };
  const after = {
    s: tcpCountersOf(obs('snmp-server-after-paws.txt'), obs('netstat-server-after-paws.txt')),
    c: tcpCountersOf(obs('snmp-client-after-paws.txt'), obs('netstat-client-after-paws.txt')),
  };
  const paws = (after.s.TcpExtPAWSTimewait ?? 0) - (before.s.TcpExtPAWSTimewait ?? 0);
  const retrans = (after.c.TcpExtTCPSynRetrans ?? 0) - (before.c.TcpExtTCPSynRetrans ?? 0);
  assert.ok(paws > 0, `PAWSTimewait rose by ${paws}`);
  assert.ok(
    retrans >= paws * 0.9,
    `every refused SYN was sent again (${retrans} retransmissions for ${paws} refusals)`,
  );
});

test('a truncated netstat is an error naming the file, never zeros', () => {
  assert.throws(() => tcpCountersOf(obs('snmp-host.txt'), obs('netstat-truncated.txt')), /\/proc\/net\/netstat/);
  assert.throws(() => tcpCountersOf(obs('snmp-truncated.txt'), obs('netstat-host.txt')), /\/proc\/net\/snmp/);
  assert.throws(
    () => parseProcNetPairs('/proc/net/netstat', 'TcpExt: A B\nTcpExt: 1 x\n', ['TcpExt']),
    /TcpExt B "x" is not a whole number/,
  );
  assert.throws(
    () => parseProcNetPairs('/proc/net/netstat', 'IpExt: A\nIpExt: 1\n', ['TcpExt']),
    /no "TcpExt:" header/,
  );
  assert.throws(
    () => parseProcNetPairs('/proc/net/netstat', 'TcpExt: A B\nTcpExt: 1\n', ['TcpExt']),
    /2 names but 1 values/,
  );
});
