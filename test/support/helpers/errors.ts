import assert from 'node:assert/strict';
import { isCniBenchError } from '../../../core/errors.js';

/** Runs `fn`, which must throw E_VALIDATION, and returns the message (it names the field). */
export function validationMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(isCniBenchError(err, 'E_VALIDATION'), String(err));
    return err.message;
  }
  assert.fail('expected a validation error');
}
