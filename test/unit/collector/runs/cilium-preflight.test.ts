import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lbMapPreflight } from '../../../../collector/runs/cilium-preflight.js';
import { isCniBenchError } from '../../../../core/errors.js';

// The study's largest step: 30,000 Services x (4 endpoints + 1 frontend) = 150,000 entries,
// more than Cilium's default of 65,536 (hand-computed; the next power of two that fits is 262,144).
test('30,000 Services with 4 endpoints do not fit the default LB map, and the fix says by how much', () => {
  const p = lbMapPreflight(30_000, 4, {});
  assert.deepEqual([p.needed, p.max, p.fits], [150_000, 65_536, false]);
  assert.match(p.fix, /"bpf-lb-map-max":"262144"/);
  assert.match(p.fix, /rollout restart daemonset\/cilium/);
});

test('a sweep that fits, a configured maximum, and existing entries counted', () => {
  assert.equal(lbMapPreflight(10_000, 4, {}).fits, true);
  assert.equal(lbMapPreflight(30_000, 4, { 'bpf-lb-map-max': '262144' }).fits, true);
  assert.equal(lbMapPreflight(13_000, 4, {}, 1_000).fits, false);
});

test('a malformed bpf-lb-map-max names the key', () => {
  assert.throws(
    () => lbMapPreflight(1, 1, { 'bpf-lb-map-max': 'lots' }),
    (e: unknown) => isCniBenchError(e, 'E_VALIDATION') && /bpf-lb-map-max/.test(e.message),
  );
});
