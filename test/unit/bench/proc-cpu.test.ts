/** bench/proc-cpu.ts: the machine's CPU counters from /proc/stat and what a profile window shows. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type CpuSnapshot, deltaCpu, parseProcStatCpu } from '../../../bench/proc-cpu.js';
import { fixture } from '../../support/helpers/fixtures.js';

test('/proc/stat: busy is everything but idle and iowait, in seconds of 100 ticks', () => {
  // cpu  3000551 557879 1267035 2128218 4189 0 433266 2829 0 0 (guest fields are inside user already)
  const { busyS, totalS } = parseProcStatCpu(fixture('proc/stat.txt'));
  assert.equal(totalS, 73939.67);
  assert.equal(busyS, 52615.6);
});

test('/proc/stat without its aggregate line, or cut short, is an error naming the file, never zero', () => {
  const text = fixture('proc/stat.txt');
  assert.throws(() => parseProcStatCpu(text.split('\n').slice(1).join('\n')), /\/proc\/stat: cannot parse/);
  assert.throws(() => parseProcStatCpu('cpu  3000551 557879 1267'), /8 counters/);
  assert.throws(() => parseProcStatCpu(''), /\/proc\/stat/);
});

test('a window: CPU per group largest first, this process included, the rest of the machine as other', () => {
  const a: CpuSnapshot = {
    atMs: 0,
    groups: new Map([
      ['fabric kube-apiserver', 10],
      ['fabric etcd', 5],
      ['node cilium-agent', 3],
    ]),
    selfS: 1,
    busyS: 100,
    totalS: 200,
  };
  const b: CpuSnapshot = {
    atMs: 10_000,
    groups: new Map([
      ['fabric kube-apiserver', 16],
      ['fabric etcd', 6],
      ['node cilium-agent', 3.005],
      ['pod MainThread', 0.5],
    ]),
    selfS: 3,
    busyS: 115,
    totalS: 220,
  };
  const d = deltaCpu(a, b);
  assert.equal(d.wallS, 10);
  assert.equal(d.cores, 2);
  assert.deepEqual(
    d.groups.map(([k]) => k),
    ['fabric kube-apiserver', 'lab process (collector frontend)', 'fabric etcd', 'pod MainThread'],
  );
  assert.equal(d.machineBusyS, 15);
  assert.ok(Math.abs(d.otherS - (15 - 6 - 2 - 1 - 0.5)) < 1e-9);
});
