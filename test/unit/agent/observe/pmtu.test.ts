import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type DfOutcome,
  parseLinkMtu,
  parsePingDf,
  parseRouteDev,
  searchPmtu,
  toPathMtu,
} from '../../../../agent/observe/pmtu.js';
import { fixture } from '../../../support/helpers/fixtures.js';

const ping = (name: string) => parsePingDf(fixture(`ping/${name}.stdout`), fixture(`ping/${name}.stderr`));

test('parsePingDf reads the outcomes of real DF pings', () => {
  assert.deepEqual(ping('reply'), { kind: 'reply' });
  assert.deepEqual(ping('frag-needed'), { kind: 'too-big', mtu: 1400, from: '198.18.251.2' });
  assert.deepEqual(ping('local-too-big'), { kind: 'too-big', mtu: 1400 });
  assert.deepEqual(ping('silent'), { kind: 'silent' });
  assert.deepEqual(ping('silent-1400'), { kind: 'silent' });
  assert.throws(() => parsePingDf(fixture('ping/truncated.stdout'), ''), /ping.*packets transmitted/s);
  assert.throws(
    () => ping('net-unreachable'),
    /^CniBenchError: ping: Destination Host Unreachable from 198\.18\.250\.2: the target answers no ping/,
  );
});

/** A path of `mtu` whose narrow hop answers (or, `silent`, drops without a word) above it; one lost probe at `lostOnce`. */
function path(mtu: number, silent: boolean, lostOnce?: number) {
  let lost = false;
  return async (bytes: number): Promise<DfOutcome> => {
    if (bytes === lostOnce && !lost) {
      lost = true;
      return { kind: 'silent' };
    }
    if (bytes <= mtu) return { kind: 'reply' };
    return silent ? { kind: 'silent' } : { kind: 'too-big', mtu };
  };
}

test('searchPmtu finds the effective MTU and flags silence above it as a black hole', async () => {
  const told = await searchPmtu(path(1400, false), 1500);
  assert.equal(told.effectiveMtu, 1400);
  assert.equal(told.blackHole, false);
  assert.equal(told.announcedMtu, 1400);
  const hole = await searchPmtu(path(1400, true), 1500);
  assert.equal(hole.effectiveMtu, 1400);
  assert.equal(hole.blackHole, true);
  const full = await searchPmtu(path(1500, true), 1500);
  assert.deepEqual([full.effectiveMtu, full.blackHole], [1500, false]);
  // One lost probe is retried, not taken for a black hole.
  const lossy = await searchPmtu(path(1500, false, 1038), 1500);
  assert.deepEqual([lossy.effectiveMtu, lossy.blackHole], [1500, false]);
  await assert.rejects(searchPmtu(path(500, true), 1500), /no reply even at 576 bytes/);
});

test('parseRouteDev and parseLinkMtu read real ip output, and fail naming ip', () => {
  assert.equal(parseRouteDev(fixture('ip/route-get.txt')), 'eth0');
  assert.equal(parseLinkMtu(fixture('ip/link-show-1450.txt')), 1450);
  assert.throws(() => parseRouteDev(fixture('ip/route-get-unreachable.stdout')), /ip: cannot parse.*dev/);
  assert.throws(() => parseLinkMtu(fixture('ip/route-get.txt')), /ip: cannot parse.*mtu/);
});

test('toPathMtu carries the search, or why there was none, onto the wire', async () => {
  const hole = await searchPmtu(path(1400, true), 1500);
  assert.deepEqual(
    { ...toPathMtu('198.18.0.9', hole), probes: 0 },
    {
      target: '198.18.0.9',
      effectiveMtu: 1400,
      localMtu: 1500,
      blackHole: true,
      announcedMtu: 0,
      probes: 0,
      error: '',
      announcedFrom: '',
    },
  );
  assert.equal(toPathMtu('x', hole).probes, hole.probes.length);
  const announced = toPathMtu('x', await searchPmtu(path(1450, false), 1500));
  assert.deepEqual([announced.effectiveMtu, announced.blackHole, announced.announcedMtu], [1450, false, 1450]);
  const hop = toPathMtu(
    'x',
    await searchPmtu(
      async (b) => (b <= 1400 ? { kind: 'reply' } : { kind: 'too-big', mtu: 1400, from: '198.18.0.1' }),
      1500,
    ),
  );
  assert.deepEqual([hop.announcedMtu, hop.announcedFrom], [1400, '198.18.0.1']);
  const none = toPathMtu('198.18.0.9', new Error('ping: no reply even at 576 bytes'));
  assert.deepEqual([none.effectiveMtu, none.error], [0, 'ping: no reply even at 576 bytes']);
});
