/**
 * The dataplane sampler against a real network namespace: conntrack fill from
 * the namespace's /proc/net/stat/nf_conntrack through the anchor process (the
 * same count `conntrack -C` gives there), rules read by the real tools on a
 * fresh sample and reused by periodic samples until due, and no process left
 * in the namespace once the sampler is closed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DataplaneSampler } from '../../agent/samplers/dataplane-sampler.js';
import { run } from '../../core/process.js';
import { DIST } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const NS = `cnibtest-dps-${process.pid}`;
const ip = (...args: string[]) => run('ip', args, { tool: 'ip' });
const inNs = (file: string, ...args: string[]) => run('ip', ['netns', 'exec', NS, file, ...args], { tool: file });

before(async () => {
  if (notRoot) return;
  await ip('netns', 'add', NS);
  // Both ends in the namespace: datagrams to 198.18.250.2 leave v0 and die at v1, which has no address.
  await inNs('ip', 'link', 'add', 'v0', 'type', 'veth', 'peer', 'name', 'v1');
  await inNs('ip', 'addr', 'add', '198.18.250.1/30', 'dev', 'v0');
  await inNs('ip', 'link', 'set', 'v0', 'up');
  await inNs('ip', 'link', 'set', 'v1', 'up');
  await inNs('ip', 'neigh', 'add', '198.18.250.2', 'lladdr', '02:00:00:00:00:02', 'dev', 'v0');
  // A conntrack match makes the namespace track its flows.
  await inNs('iptables-legacy', '-A', 'OUTPUT', '-m', 'conntrack', '--ctstate', 'NEW', '-j', 'ACCEPT');
});
after(async () => {
  if (!notRoot) await ip('netns', 'del', NS).catch(() => undefined);
});

test('sampler: conntrack from /proc without tools, rules fresh on demand and reused until due, nothing left behind', {
  skip: notRoot,
  timeout: 60_000,
}, async () => {
  const sampler = new DataplaneSampler({
    hostNetns: `/run/netns/${NS}`,
    processNames: ['kube-proxy'],
    rulesCadence: { minIntervalMs: 600_000, costFactor: 100 },
  });
  try {
    const first = await sampler.sample(undefined, { fresh: true });
    assert.deepEqual(first.errors, []);
    assert.equal(first.conntrackCount, 0);
    assert.ok(first.conntrackMax > 0);
    assert.equal(first.iptablesBackend, 'legacy');
    assert.equal(first.iptablesTableRules.filter, 1);
    assert.ok(first.rulesTimeMs >= first.timeMs - 50 && first.rulesTimeMs <= Date.now());

    const fill = await run(
      'ip',
      [
        'netns',
        'exec',
        NS,
        process.execPath,
        `${DIST}test/support/helpers/conntrack-fill.js`,
        '--target',
        '198.18.250.2',
        '--count',
        '40',
      ],
      { tool: 'conntrack-fill' },
    );
    assert.equal(fill.stdout.trim(), '40');
    await inNs('iptables-legacy', '-A', 'OUTPUT', '-j', 'ACCEPT');
    const counted = Number((await inNs('conntrack', '-C')).stdout.trim());
    const periodic = await sampler.sample();
    assert.equal(periodic.conntrackCount, counted);
    assert.ok(counted >= 40, `conntrack -C said ${counted}`);
    // Not due: the rules are the first read's, and say so.
    assert.equal(periodic.rulesTimeMs, first.rulesTimeMs);
    assert.equal(periodic.iptablesTableRules.filter, 1);

    const fresh = await sampler.sample(undefined, { fresh: true });
    assert.ok(fresh.rulesTimeMs > first.rulesTimeMs);
    assert.equal(fresh.iptablesTableRules.filter, 2);
    assert.ok(fresh.conntrackDrops === 0, `drops ${fresh.conntrackDrops}`);
    assert.notEqual(
      (await inNs('ip', 'netns', 'pids', NS)).stdout.trim(),
      '',
      'the anchor lives in the namespace while sampling',
    );
  } finally {
    await sampler.close();
  }
  assert.equal((await ip('netns', 'pids', NS)).stdout.trim(), '', 'no process is left in the namespace');
});

test('sampler: a namespace that does not exist is an error naming it, never a zero', {
  skip: notRoot,
  timeout: 30_000,
}, async () => {
  const sampler = new DataplaneSampler({ hostNetns: '/run/netns/cnibtest-no-such-ns' });
  try {
    const s = await sampler.sample(undefined, { fresh: true });
    assert.ok(
      s.errors.some((e) => e.startsWith('conntrack:') && e.includes('cnibtest-no-such-ns')),
      JSON.stringify(s.errors),
    );
    assert.ok(
      s.errors.some((e) => e.startsWith('iptables')),
      JSON.stringify(s.errors),
    );
  } finally {
    await sampler.close();
  }
});
