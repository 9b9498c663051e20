/**
 * A small schema for flat records (a daemon's config read from flags and
 * environment, a child's JSON answer): each field's type, bounds and default
 * beside it, every problem reported with the field's name, the result
 * deep-frozen. It exists because the agent must stay within its memory
 * budget: zod costs the agent about 5 MiB of its 80 MiB (measured in
 * docs/findings/2026-12-06-monitor-cost.md). Scenarios, REST bodies and the
 * collector keep zod, whose nesting and unions they need.
 */
import { type FieldIssue, validationError } from './errors.js';
import { deepFreeze } from './validate.js';

type Read<T> = { ok: true; value: T } | { ok: false; message: string };

/** One field: reads a raw value (undefined when absent) into its type or says what is wrong. */
export interface Field<T> {
  read(raw: unknown): Read<T>;
  /** The field's default, as help needs it (core/flags.ts DefaultSource). */
  safeParse(value: undefined): { success: boolean; data?: unknown };
}

type Shape = Readonly<Record<string, Field<unknown>>>;
export type FieldsOutput<S extends Shape> = { readonly [K in keyof S]: S[K] extends Field<infer T> ? T : never };

interface Common<T> {
  /** Used when the value is absent (undefined); without it, absence is an error unless `optional`. */
  default?: T;
  optional?: boolean;
}

function field<T>(o: Common<T>, check: (raw: unknown) => Read<T>): Field<T> {
  const read = (raw: unknown): Read<T> => {
    if (raw === undefined) {
      if (o.default !== undefined) return { ok: true, value: structuredClone(o.default) };
      return o.optional ? { ok: true, value: undefined as T } : { ok: false, message: 'is required' };
    }
    return check(raw);
  };
  return {
    read,
    safeParse: () => {
      const r = read(undefined);
      return r.ok ? { success: true, data: r.value } : { success: false };
    },
  };
}

const bad = (message: string): { ok: false; message: string } => ({ ok: false, message });
const shown = (raw: unknown): string => (typeof raw === 'string' ? `'${raw}'` : (JSON.stringify(raw) ?? String(raw)));

function bounded<T>(n: number, raw: unknown, b: { min?: number; max?: number; int?: boolean }): Read<T> {
  if (!Number.isFinite(n)) return bad(`must be a number, got ${shown(raw)}`);
  if (b.int && !Number.isInteger(n)) return bad(`must be a whole number, got ${shown(raw)}`);
  if (b.min !== undefined && n < b.min) return bad(`must be at least ${b.min}, got ${n}`);
  if (b.max !== undefined && n > b.max) return bad(`must be at most ${b.max}, got ${n}`);
  return { ok: true, value: n as T };
}

function text(raw: unknown, b: { min?: number; max?: number }): Read<string> {
  if (typeof raw !== 'string') return bad(`must be a string, got ${shown(raw)}`);
  if (b.min !== undefined && raw.length < b.min)
    return bad(b.min === 1 ? 'must not be empty' : `must have at least ${b.min} characters`);
  if (b.max !== undefined && raw.length > b.max) return bad(`must have at most ${b.max} characters`);
  return { ok: true, value: raw };
}

export const fields = {
  string: (o: Common<string> & { min?: number; max?: number } = {}): Field<string> => field(o, (raw) => text(raw, o)),
  optionalString: (o: { min?: number; max?: number } = {}): Field<string | undefined> =>
    field<string | undefined>({ optional: true }, (raw) => text(raw, o)),
  /** A number; a string (from a flag or the environment) is read as one. */
  number: (o: Common<number> & { min?: number; max?: number; int?: boolean } = {}): Field<number> =>
    field(o, (raw) =>
      typeof raw === 'number' || typeof raw === 'string'
        ? bounded<number>(typeof raw === 'string' && raw.trim() === '' ? Number.NaN : Number(raw), raw, o)
        : bad(`must be a number, got ${shown(raw)}`),
    ),
  /** true/false, or from text: true, false, 1, 0. */
  boolean: (o: Common<boolean> = {}): Field<boolean> =>
    field(o, (raw) => {
      if (typeof raw === 'boolean') return { ok: true, value: raw };
      if (raw === 'true' || raw === '1') return { ok: true, value: true };
      if (raw === 'false' || raw === '0') return { ok: true, value: false };
      return bad(`must be one of true, false, 1, 0; got ${shown(raw)}`);
    }),
  /** A list of strings, each within `item` bounds. */
  strings: (
    o: Common<string[]> & { min?: number; max?: number; item?: { min?: number; max?: number } } = {},
  ): Field<string[]> =>
    field(o, (raw) => {
      if (!Array.isArray(raw)) return bad(`must be a list, got ${shown(raw)}`);
      if (o.min !== undefined && raw.length < o.min) return bad(`must have at least ${o.min} entries`);
      if (o.max !== undefined && raw.length > o.max) return bad(`must have at most ${o.max} entries`);
      for (const [i, item] of raw.entries()) {
        const r = text(item, o.item ?? {});
        if (!r.ok) return bad(`[${i}] ${r.message}`);
      }
      return { ok: true, value: [...(raw as string[])] };
    }),
  /** String keys to string values. */
  stringMap: (o: Common<Record<string, string>> = {}): Field<Record<string, string>> =>
    field(o, (raw) => {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return bad(`must be a map, got ${shown(raw)}`);
      for (const [k, v] of Object.entries(raw)) if (typeof v !== 'string') return bad(`.${k} must be a string`);
      return { ok: true, value: { ...(raw as Record<string, string>) } };
    }),
};

/** A check across fields, run only when every field read: it returns issues naming the field at fault. */
export type CrossCheck<O> = (value: O) => FieldIssue[];

/**
 * Reads `raw` against `shape`: pure, no coercion beyond what each field says.
 * A key the shape does not know is an error; so is every field that does not
 * read; all are reported at once, in one error naming `what` and each field.
 */
export function readFields<S extends Shape>(
  shape: S,
  raw: unknown,
  what: string,
  cross?: CrossCheck<FieldsOutput<S>>,
): FieldsOutput<S> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw validationError([{ path: '(root)', message: `must be an object, got ${shown(raw)}` }], what);
  const input = raw as Record<string, unknown>;
  const issues: FieldIssue[] = Object.keys(input)
    .filter((k) => !Object.hasOwn(shape, k))
    .map((k) => ({ path: k, message: 'is not a known field' }));
  const out: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(shape)) {
    const r = f.read(input[name]);
    if (r.ok) out[name] = r.value;
    else issues.push({ path: name, message: r.message });
  }
  if (issues.length === 0 && cross) issues.push(...cross(out as FieldsOutput<S>));
  if (issues.length > 0) throw validationError(issues, what);
  return deepFreeze(out as FieldsOutput<S>);
}
