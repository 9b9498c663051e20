import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { millicoresBetween, ticksWithChildren, waitQuiet } from '../../../../lab/policy/settle.js';
import { fixture } from '../../../support/helpers/fixtures.js';

test('millicores from clock ticks (100 per second): 50 ticks in 1 s is half a core', () => {
  assert.equal(millicoresBetween(1000, 1050, 1000), 500);
  assert.equal(millicoresBetween(7, 7, 2000), 0);
  assert.equal(millicoresBetween(7, 9, 0), 0);
});

test("a process's ticks include its waited-for children's (utime + stime + cutime + cstime)", () => {
  assert.equal(ticksWithChildren(fixture('proc/waited-children-stat.txt')), 9 + 18 + 14_963 + 3272);
  assert.throws(() => ticksWithChildren(fixture('proc/truncated-stat.txt')), /cannot parse/);
});

test('a sleeping process is quiet at once; a spinning one is reported busy at the deadline, never as quiet', async () => {
  const idle = spawn('sleep', ['10']);
  const busy = spawn(process.execPath, ['-e', 'const end = Date.now() + 5000; while (Date.now() < end);']);
  try {
    const q = await waitQuiet(() => [idle.pid as number], { windowMs: 300 });
    assert.equal(q.quiet, true);
    assert.ok(q.millicores < 50, String(q.millicores));
    const b = await waitQuiet(() => [busy.pid as number], { windowMs: 300, timeoutMs: 600 });
    assert.equal(b.quiet, false);
    assert.ok(b.millicores > 50, String(b.millicores));
    assert.deepEqual(await waitQuiet(() => []), { ms: 0, millicores: 0, quiet: true });
  } finally {
    idle.kill();
    busy.kill();
  }
});
