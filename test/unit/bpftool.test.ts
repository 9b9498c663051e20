import assert from 'node:assert/strict';

import { test } from 'node:test';
import { isCniBenchError } from '../../core/errors.js';
import { parseBpftoolMapShow } from '../../agent/samplers/bpftool.js';

import { fixture } from '../helpers/fixtures.js';

test('parses maps with their limits and kernel-accounted memory', () => {
  const maps = parseBpftoolMapShow(fixture('bpftool-map-show.json'));
  assert.deepEqual(maps, [
    { id: 26, name: 'cnib_lb4', type: 'hash', maxEntries: 65536, bytesMemlock: 5768288 },
    { id: 27, name: 'cnib_ct', type: 'lru_hash', maxEntries: 1024, bytesMemlock: 115648 },
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
      (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('bpftool: cannot parse output') && err.message.includes('output: "'),
      name,
    );
  }
});
