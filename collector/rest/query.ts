/**
 * A query string validated by a route's zod schema: numbers where the schema
 * wants one (digits only, so '1e3' or '' stay text and are refused), every
 * refusal a 400 naming the parameter.
 */
import { z } from 'zod';
import { CniBenchError, ErrorCodes, type FieldIssue } from '../../core/errors.js';
import { formatPath } from '../../core/validate.js';

const numericKeys = new WeakMap<z.ZodObject, Set<string>>();

function numeric(schema: z.ZodObject): Set<string> {
  let keys = numericKeys.get(schema);
  if (!keys) {
    const js = z.toJSONSchema(schema, { io: 'input' }) as { properties?: Record<string, { type?: string }> };
    keys = new Set(
      Object.entries(js.properties ?? {})
        .filter(([, p]) => p.type === 'integer' || p.type === 'number')
        .map(([k]) => k),
    );
    numericKeys.set(schema, keys);
  }
  return keys;
}

export function parseQuery(schema: z.ZodObject | undefined, params: URLSearchParams): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  const nums = schema ? numeric(schema) : new Set<string>();
  for (const [k, v] of params) {
    if (k in raw) throw invalid([{ path: k, message: 'given more than once' }]);
    raw[k] = nums.has(k) && /^-?\d{1,20}(\.\d{1,20})?$/.test(v) ? Number(v) : v;
  }
  if (!schema) return raw;
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  return invalid(
    r.error.issues.flatMap((i) =>
      i.code === 'unrecognized_keys'
        ? i.keys.map((k) => ({ path: k, message: 'unknown query parameter' }))
        : [{ path: formatPath(i.path), message: i.message }],
    ),
  );
}

function invalid(issues: FieldIssue[]): never {
  throw new CniBenchError(ErrorCodes.VALIDATION, issues.map((i) => `${i.path}: ${i.message}`).join('; '), {
    details: { field: issues[0]?.path ?? '', issues },
  });
}
