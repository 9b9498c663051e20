import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { removeStaleSocket, unixSocketPath } from '../../../collector/stale-socket.js';
import { ErrorCodes, isCniBenchError } from '../../../core/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'cnib-sock-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a socket left by a SIGKILLed listener is removed, so the path can be bound again', async () => {
  const path = join(dir, 'dead.sock');
  // A real process listens, then dies without any handler running.
  const child = spawn(
    process.execPath,
    ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  assert.ok(existsSync(path), 'the kernel leaves the socket file behind');
  const rebind = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(path, () => s.close(() => resolve()));
    });
  await assert.rejects(rebind(), /EADDRINUSE/);
  assert.equal(await removeStaleSocket(path), true);
  await rebind();
});

test('a socket a live process serves is refused, naming the path; other paths are left alone', async () => {
  const path = join(dir, 'live.sock');
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(path, resolve));
  try {
    await assert.rejects(
      removeStaleSocket(path),
      (err) => isCniBenchError(err, ErrorCodes.CONFLICT) && err.message.includes(path),
    );
    assert.ok(existsSync(path));
  } finally {
    await new Promise((resolve) => s.close(resolve));
  }
  const file = join(dir, 'plain');
  writeFileSync(file, 'x');
  await assert.rejects(
    removeStaleSocket(file),
    (err) => isCniBenchError(err, ErrorCodes.VALIDATION) && /not a socket/.test(err.message),
  );
  assert.ok(existsSync(file));
  assert.equal(await removeStaleSocket(join(dir, 'absent.sock')), false);
});

test('unix listen addresses give their path; TCP ones none', () => {
  assert.equal(unixSocketPath('unix:/run/x.sock'), '/run/x.sock');
  assert.equal(unixSocketPath('unix:///run/x.sock'), '/run/x.sock');
  assert.equal(unixSocketPath('127.0.0.1:0'), undefined);
});
