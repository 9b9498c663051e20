import assert from 'node:assert/strict';

import { test } from 'node:test';
import { summariseBpfMaps } from '../../../../agent/samplers/bpf-totals.js';
import { parseBpftoolMapDump, parseBpftoolMapShow } from '../../../../agent/samplers/bpftool.js';
import { isCniBenchError } from '../../../../core/errors.js';

import { fixture } from '../../../support/helpers/fixtures.js';

test('parses maps with their limits and kernel-accounted memory', () => {
  const maps = parseBpftoolMapShow(fixture('bpftool-map-show.json'));
  assert.deepEqual(maps, [
    { id: 26, name: 'cnib_lb4', type: 'hash', maxEntries: 65536, bytesMemlock: 5768288, pinned: [] },
    { id: 27, name: 'cnib_ct', type: 'lru_hash', maxEntries: 1024, bytesMemlock: 115648, pinned: [] },
  ]);
  assert.deepEqual(parseBpftoolMapShow(fixture('bpftool-map-show-pretty.json')), maps);
});

test('no maps is an empty list', () => {
  assert.deepEqual(parseBpftoolMapShow(fixture('bpftool-map-show-empty.json')), []);
});

test('truncated and error outputs are errors naming bpftool with a sample', () => {
  for (const name of ['bpftool-map-show-truncated.json', 'bpftool-map-show-error.json']) {
    assert.throws(
      () => parseBpftoolMapShow(fixture(name)),
      (err) =>
        isCniBenchError(err, 'E_PARSE') &&
        err.message.startsWith('bpftool: cannot parse output') &&
        err.message.includes('output: "'),
      name,
    );
  }
});

test('map dump: entries counted; an empty map is 0; errors and truncation name bpftool', () => {
  assert.equal(parseBpftoolMapDump(fixture('bpftool-map-dump-lb.json')), 3);
  assert.equal(parseBpftoolMapDump(fixture('bpftool-map-dump-empty.json')), 0);
  assert.throws(
    () => parseBpftoolMapDump(fixture('bpftool-map-dump-error.json')),
    /bpftool: .*No such file or directory/s,
  );
  assert.throws(() => parseBpftoolMapDump(fixture('bpftool-map-dump-truncated.json')), /bpftool: .*invalid JSON/s);
});

test("totals over all maps; the LB service map's fill only where Cilium's map exists", () => {
  const maps = parseBpftoolMapShow(fixture('bpftool-map-show.json'));
  const t = summariseBpfMaps(maps, 12);
  assert.equal(t.maps, maps.length);
  assert.equal(
    t.maxEntries,
    maps.reduce((n, m) => n + m.maxEntries, 0),
  );
  assert.equal(t.lbServiceEntries, undefined, 'no cilium_lb4_serv* map in this capture');
  const withLb = summariseBpfMaps(
    [...maps, { id: 99, name: 'cilium_lb4_serv', type: 'hash', maxEntries: 65536, bytesMemlock: 1 }],
    3,
  );
  assert.equal(withLb.lbServiceEntries, 3);
  assert.equal(withLb.lbServiceMaxEntries, 65536);
  // The largest maps by memory, named by their pin where bpftool -f showed one.
  assert.deepEqual(
    t.topMaps.map((m) => [m.name, m.bytesMemlock]),
    [
      ['cnib_lb4', 5768288],
      ['cnib_ct', 115648],
    ],
  );
  const pinned = summariseBpfMaps([
    {
      id: 7,
      name: 'cilium_lb4_serv',
      type: 'hash',
      maxEntries: 1,
      bytesMemlock: 9,
      pinned: ['/sys/fs/bpf/tc/globals/cilium_lb4_services_v2'],
    },
  ]);
  assert.equal(pinned.topMaps[0]?.name, 'cilium_lb4_services_v2');
});
