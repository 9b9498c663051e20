/**
 * Validates untrusted input against a zod schema and turns every problem into
 * one coded error whose message names each field (`measurements[2].tool`).
 * Successful results are deep-frozen, so parsed config cannot drift at run time.
 */
import type { z } from 'zod';
import { type FieldIssue, validationError } from './errors.js';

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

export function parseWith<S extends z.ZodType>(schema: S, input: unknown, what: string): Readonly<z.output<S>> {
  const r = schema.safeParse(input);
  if (!r.success) {
    const issues: FieldIssue[] = r.error.issues.map((i) => ({ path: formatPath(i.path), message: i.message }));
    throw validationError(issues, what);
  }
  return deepFreeze(r.data);
}
