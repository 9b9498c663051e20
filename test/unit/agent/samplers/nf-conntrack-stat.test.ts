import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseNfConntrackStat } from '../../../../agent/samplers/conntrack.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { fixture } from '../../../support/helpers/fixtures.js';

test('nf_conntrack stat: entries of the namespace (as conntrack -C said: 7), counters summed over CPUs', () => {
  assert.deepEqual(parseNfConntrackStat(fixture('proc-net-stat-nf-conntrack.txt')), {
    entries: 7,
    drop: 0,
    earlyDrop: 0,
    insertFailed: 0,
  });
});

test('nf_conntrack stat of a full table: 20 new flows against a maximum of 8 left 8 entries and 3 + 9 drops on two CPUs', () => {
  assert.deepEqual(parseNfConntrackStat(fixture('proc-net-stat-nf-conntrack-full.txt')), {
    entries: 8,
    drop: 12,
    earlyDrop: 0,
    insertFailed: 0,
  });
});

test('nf_conntrack stat: truncated, header-only and look-alike files are errors naming the file and quoting it', () => {
  const parseFails = (name: string, reason: RegExp) =>
    assert.throws(
      () => parseNfConntrackStat(fixture(name)),
      (err) =>
        isCniBenchError(err, 'E_PARSE') &&
        err.message.startsWith('/proc/net/stat/nf_conntrack: cannot parse output') &&
        reason.test(err.message) &&
        err.message.includes('entries'),
    );
  parseFails('proc-net-stat-nf-conntrack-truncated.txt', /not 17 hexadecimal counters/);
  parseFails('proc-net-stat-nf-conntrack-header-only.txt', /no per-CPU line/);
  parseFails('proc-net-stat-rt-cache.txt', /header lacks drop, early_drop, insert_failed/);
  assert.throws(
    () => parseNfConntrackStat(''),
    (err) => isCniBenchError(err, 'E_PARSE'),
  );
});
