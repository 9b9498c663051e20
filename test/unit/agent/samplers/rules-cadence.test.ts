import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_RULES_CADENCE, rulesReadDue } from '../../../../agent/samplers/rules-cadence.js';

test('rules are read on the first sample, then not before the minimum interval', () => {
  assert.equal(rulesReadDue(undefined, 0), true);
  const last = { atMs: 1000, wallMs: 20 };
  assert.equal(rulesReadDue(last, 1000 + DEFAULT_RULES_CADENCE.minIntervalMs - 1), false);
  assert.equal(rulesReadDue(last, 1000 + DEFAULT_RULES_CADENCE.minIntervalMs), true);
});

test('an expensive read waits costFactor times its own wall time (1.2 s read: 120 s at the default)', () => {
  const last = { atMs: 0, wallMs: 1200 };
  assert.equal(rulesReadDue(last, 119_999), false);
  assert.equal(rulesReadDue(last, 120_000), true);
  assert.equal(rulesReadDue(last, 10_000, { minIntervalMs: 1000, costFactor: 5 }), true);
  assert.equal(rulesReadDue(last, 5_999, { minIntervalMs: 1000, costFactor: 5 }), false);
});
