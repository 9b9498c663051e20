import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProcStatCpus, sumCpus } from '../../../../agent/samplers/kernel-cpu.js';
import { fixture } from '../../../support/helpers/fixtures.js';

test('parseProcStatCpus reads every CPU line of a real /proc/stat', () => {
  const s = parseProcStatCpus(fixture('proc-stat/idle-before.txt'));
  assert.deepEqual([...s.perCpu.keys()], [0, 1]);
  assert.deepEqual(s.total, {
    user: 1240163,
    nice: 211183,
    system: 463206,
    idle: 372589,
    iowait: 1392,
    irq: 0,
    softirq: 102945,
    steal: 1358,
  });
  assert.equal(s.perCpu.get(1)?.softirq, 60896);
  assert.equal(s.perCpu.get(0)?.system, 228182);
});

test('sumCpus restricts to the node CPUs and refuses a CPU the kernel does not list', () => {
  const s = parseProcStatCpus(fixture('proc-stat/idle-before.txt'));
  assert.equal(sumCpus(s, [1]).system, 235023);
  assert.equal(sumCpus(s, [0, 1]).system, 228182 + 235023);
  assert.throws(() => sumCpus(s, [2]), /CPU 2 is not listed \(online: 0,1\)/);
});

test('a truncated /proc/stat is an error naming the file, never zero ticks', () => {
  assert.throws(
    () => parseProcStatCpus(fixture('proc-stat/truncated.txt')),
    (e: Error) => {
      assert.match(e.message, /\/proc\/stat/);
      assert.match(e.message, /truncated/);
      return true;
    },
  );
  // Cut right after the per-CPU block: no line after it says the block is whole.
  const text = fixture('proc-stat/idle-before.txt');
  const cut = text.slice(0, text.indexOf('intr'));
  assert.throws(() => parseProcStatCpus(cut), /not followed by another line/);
  assert.throws(() => parseProcStatCpus('0.10 0.82 1.78 1/400 123\n'), /does not start with the "cpu" line/);
  assert.throws(() => parseProcStatCpus(text.replace(/^cpu1 \d+/m, 'cpu1 x')), /user "x" is not a whole number/);
});
