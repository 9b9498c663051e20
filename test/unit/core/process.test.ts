import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isCniBenchError } from '../../../core/errors.js';
import { liveChildren, run, spawnLongRunning } from '../../../core/process.js';

/** Running or sleeping; a zombie waiting for its reaper counts as dead. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

test('returns stdout of a successful command', async () => {
  const r = await run('printf', ['%s-%s', 'a', 'b']);
  assert.equal(r.stdout, 'a-b');
  assert.equal(r.exitCode, 0);
});

test('arguments are passed as they are, never through a shell', async () => {
  const r = await run('printf', ['%s', '$(echo pwned); `id`']);
  assert.equal(r.stdout, '$(echo pwned); `id`');
});

test('a missing executable is E_TOOL_MISSING naming it', async () => {
  await assert.rejects(
    run('cni-bench-no-such-tool', []),
    (err) => isCniBenchError(err, 'E_TOOL_MISSING') && /cni-bench-no-such-tool/.test(err.message),
  );
});

test('a bad exit is E_TOOL_FAILED with the stderr sample', async () => {
  await assert.rejects(
    run('sh', ['-c', 'echo broken >&2; exit 3'], { tool: 'demo' }),
    (err) => isCniBenchError(err, 'E_TOOL_FAILED') && /demo: exited with 3: broken/.test(err.message),
  );
});

test('input is written to stdin', async () => {
  const r = await run('cat', [], { input: 'hello' });
  assert.equal(r.stdout, 'hello');
});

test('a timeout kills the whole process group, grandchildren included', async () => {
  const marker = `/tmp/cnib-grandchild-${process.pid}`;
  await assert.rejects(run('sh', ['-c', `sleep 30 & echo $! > ${marker}; wait`], { timeoutMs: 300 }), (err) =>
    isCniBenchError(err, 'E_TIMEOUT'),
  );
  const pid = Number((await readFile(marker, 'utf8')).trim());
  await sleep(200);
  assert.ok(pid > 0 && !alive(pid), `grandchild ${pid} survived`);
});

test('abort cancels with E_CANCELLED', async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  await assert.rejects(run('sleep', ['30'], { signal: ac.signal }), (err) => isCniBenchError(err, 'E_CANCELLED'));
});

test('a long-running process stops on request and is no longer counted', async () => {
  const before = liveChildren();
  const p = spawnLongRunning('sleep', ['30']);
  assert.equal(liveChildren(), before + 1);
  const r = await p.stop();
  assert.notEqual(r.exitCode, 0);
  assert.equal(liveChildren(), before);
});
