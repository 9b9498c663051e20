import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CniBenchError } from '../../../core/errors.js';
import { fields as f, readFields } from '../../../core/fields.js';

const shape = {
  name: f.string({ min: 1, max: 8 }),
  alias: f.optionalString({ min: 1 }),
  port: f.number({ int: true, min: 1, max: 65535, default: 80 }),
  share: f.number({ min: 0, max: 0.5, default: 0.1 }),
  on: f.boolean({ default: false }),
  tags: f.strings({ max: 2, item: { min: 1 }, default: [] }),
  labels: f.stringMap({ default: {} }),
};

function issues(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof CniBenchError);
    return (err.details as { issues: { path: string; message: string }[] }).issues;
  }
  assert.fail('no error');
}

test('fields: defaults fill absent values, text is read as numbers and booleans, the result is frozen', () => {
  const c = readFields(shape, { name: 'a', port: '8080', on: '1' }, 'x');
  assert.deepEqual(c, { name: 'a', alias: undefined, port: 8080, share: 0.1, on: true, tags: [], labels: {} });
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.tags));
  // A default is copied, never shared between reads.
  const d = readFields(shape, { name: 'b' }, 'x');
  assert.notEqual(c.tags, d.tags);
});

test('fields: every bad field is named at once, with what is wrong', () => {
  const found = issues(() =>
    readFields(
      shape,
      { name: '', port: '0.5', share: 'x', on: 'yes', tags: ['a', ''], labels: { k: 1 }, extra: 1 },
      'x',
    ),
  );
  assert.deepEqual(
    found.map((i) => i.path),
    ['extra', 'name', 'port', 'share', 'on', 'tags', 'labels'],
  );
  assert.match(found.find((i) => i.path === 'port')?.message ?? '', /whole number/);
  assert.match(found.find((i) => i.path === 'on')?.message ?? '', /one of true, false, 1, 0/);
  assert.match(found.find((i) => i.path === 'tags')?.message ?? '', /\[1\] must not be empty/);
  assert.throws(() => readFields(shape, {}, 'widget config'), /invalid widget config: name: is required/);
  assert.throws(() => readFields(shape, { name: 'a', port: '' }, 'x'), /port: must be a number, got ''/);
  assert.throws(() => readFields(shape, { name: 'a', port: 70000 }, 'x'), /port: must be at most 65535, got 70000/);
  assert.throws(() => readFields(shape, [], 'x'), /\(root\): must be an object/);
});

test('fields: cross-field checks run only when every field read, and name their field', () => {
  const cross = (c: { port: number; share: number }) =>
    c.port === 80 && c.share > 0.2 ? [{ path: 'share', message: 'at most 0.2 on port 80' }] : [];
  assert.throws(() => readFields(shape, { name: 'a', share: 0.3 }, 'x', cross), /share: at most 0.2 on port 80/);
  assert.throws(() => readFields(shape, { share: 0.3 }, 'x', cross), /invalid x: name: is required$/);
});

test('fields: a field gives its default to help, or none', () => {
  assert.deepEqual(shape.port.safeParse(undefined), { success: true, data: 80 });
  assert.deepEqual(shape.name.safeParse(undefined), { success: false });
  assert.deepEqual(shape.alias.safeParse(undefined), { success: true, data: undefined });
});
