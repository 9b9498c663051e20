/**
 * Pure: the samples of a Prometheus text exposition (what kube-apiserver's
 * /metrics serves), and the few sums a profile needs. A line that is neither
 * a comment nor `name{labels} value` is an error naming the line, never a
 * skipped metric.
 */
import { parseError } from '../core/errors.js';

export interface PromSample {
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

function parseLabels(text: string, line: string): Record<string, string> {
  const out: Record<string, string> = {};
  LABEL.lastIndex = 0;
  let m: RegExpExecArray | null = LABEL.exec(text);
  let end = 0;
  while (m) {
    out[m[1] as string] = (m[2] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    end = LABEL.lastIndex;
    m = LABEL.exec(text);
  }
  if (end !== text.length) throw parseError('kube-apiserver /metrics', line, 'labels not in name="value" form');
  return out;
}

function parseValue(v: string, line: string): number {
  if (v === '+Inf') return Number.POSITIVE_INFINITY;
  if (v === '-Inf') return Number.NEGATIVE_INFINITY;
  if (v === 'NaN') return Number.NaN;
  const n = Number(v);
  if (v === '' || !Number.isFinite(n)) throw parseError('kube-apiserver /metrics', line, `value ${v} is not a number`);
  return n;
}

export function parsePromText(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) throw parseError('kube-apiserver /metrics', line, 'not a "name{labels} value" sample');
    out.push({ name: m[1] as string, labels: parseLabels(m[2] ?? '', line), value: parseValue(m[3] as string, line) });
  }
  return out;
}

/** Sums of metric `name` grouped by the values of `by` (joined with " "); samples failing `where` are left out. */
export function sumBy(
  samples: readonly PromSample[],
  name: string,
  by: readonly string[],
  where: (l: Readonly<Record<string, string>>) => boolean = () => true,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== name || !where(s.labels)) continue;
    const key = by.map((k) => s.labels[k] ?? '').join(' ');
    out.set(key, (out.get(key) ?? 0) + s.value);
  }
  return out;
}

/** b - a per key (keys of b; a missing key counts as 0). */
export function deltaOf(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): Map<string, number> {
  return new Map([...b].map(([k, v]) => [k, v - (a.get(k) ?? 0)]));
}
