/**
 * core/netns.ts: the argument arrays it builds, and real runs inside a real
 * namespace entered by name, by path and by the pid of a process in it.
 */
import assert from 'node:assert/strict';
import { readlinkSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { isCniBenchError } from '../../../core/errors.js';
import { NETNS_PRESETS, netnsArgv, netnsAt, netnsPath, runInNetns } from '../../../core/netns.js';
import { run, spawnLongRunning } from '../../../core/process.js';
import { notRoot } from '../../support/helpers/root.js';

const NS = `cnibnsrun-${process.pid}`;

test('argument arrays: nsenter only when a namespace is given; name, path and pid as nsenter opens them', () => {
  assert.deepEqual(netnsArgv(undefined, 'iptables-save', ['-c']), ['iptables-save', ['-c']]);
  assert.deepEqual(netnsArgv(netnsAt(''), 'iptables-save', ['-c']), ['iptables-save', ['-c']]);
  assert.deepEqual(netnsArgv(netnsAt('/proc/1/ns/net'), 'iptables-save', ['-c']), [
    'nsenter',
    ['--net=/proc/1/ns/net', '--', 'iptables-save', '-c'],
  ]);
  assert.equal(netnsPath({ name: 'cnib-n1' }), '/run/netns/cnib-n1');
  assert.equal(netnsPath({ pid: 42 }), '/proc/42/ns/net');
  for (const bad of [
    { name: '../etc' },
    { name: '' },
    { name: '..' },
    { pid: 0 },
    { pid: 1.5 },
    { path: 'relative/net' },
  ])
    assert.throws(() => netnsPath(bad), /netns (name|pid|path)/);
});

test('the presets grow with the work they are for', () => {
  const order = (['probe', 'change', 'rules-dump', 'load'] as const).map((p) => NETNS_PRESETS[p].timeoutMs);
  assert.deepEqual(
    order,
    [...order].sort((a, b) => a - b),
  );
  assert.ok(
    NETNS_PRESETS['rules-dump'].maxBuffer >= 1024 * 1024 * 1024,
    'a rules dump at 30,000 Services needs hundreds of MiB',
  );
});

before(async () => {
  if (!notRoot) await run('ip', ['netns', 'add', NS], { tool: 'ip', timeoutMs: 10_000 });
});
after(async () => {
  if (!notRoot) await run('ip', ['netns', 'delete', NS], { tool: 'ip', timeoutMs: 10_000, okExitCodes: [0, 1] });
});

test('a tool run by name, by path and by pid sees that namespace, and only its loopback', {
  skip: notRoot,
}, async () => {
  const want = (await runInNetns({ name: NS }, 'probe', 'readlink', ['/proc/self/ns/net'])).stdout.trim();
  assert.notEqual(want, readlinkSync('/proc/self/ns/net'), 'the tool ran in the test’s own namespace');
  assert.equal(
    (await runInNetns({ path: `/run/netns/${NS}` }, 'probe', 'readlink', ['/proc/self/ns/net'])).stdout.trim(),
    want,
  );
  const holder = spawnLongRunning(...netnsArgv({ name: NS }, 'sleep', ['30']), { tool: 'sleep' });
  try {
    // nsenter execs in place: the pid is sleep's, and it is in the namespace once nsenter has entered it.
    const until = Date.now() + 5000;
    while (readlinkSync(`/proc/${holder.pid}/ns/net`) !== want && Date.now() < until)
      await new Promise((r) => setTimeout(r, 10));
    assert.equal(
      (await runInNetns({ pid: holder.pid! }, 'probe', 'readlink', ['/proc/self/ns/net'])).stdout.trim(),
      want,
    );
  } finally {
    await holder.stop();
  }
  const dev = (await runInNetns({ name: NS }, 'probe', 'cat', ['/proc/net/dev'])).stdout;
  assert.deepEqual(
    [...dev.matchAll(/^\s*([^:\s]+):/gm)].map((m) => m[1]),
    ['lo'],
  );
});

test('errors name the tool; a namespace that does not exist fails, never runs in ours', { skip: notRoot }, async () => {
  await assert.rejects(
    runInNetns({ name: NS }, 'probe', 'sh', ['-c', 'exit 3']),
    (e) => isCniBenchError(e, 'E_TOOL_FAILED') && e.message.startsWith('sh:'),
  );
  await assert.rejects(
    runInNetns({ name: `${NS}-absent` }, 'probe', 'true', []),
    (e) => isCniBenchError(e, 'E_TOOL_FAILED') && /true: exited with 1/.test(e.message),
  );
});
