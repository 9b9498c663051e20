/**
 * Seeded, bounded generation of hostile values for the hostile-input suite:
 * the same seed gives the same inputs (a failure names its seed and case), and
 * no value is larger than the bound given.
 */

/** mulberry32: small, fast, good enough to pick inputs. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rand = () => number;

export const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
export const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

/** Strings that break parsers, renderers and databases, up to `max` characters. */
export function hostileString(r: Rand, max = 4096): string {
  const kinds = [
    () => '',
    () => ' ',
    () => 'x'.repeat(int(r, 1, max)),
    () => '\n# heading\n<script>alert(1)</script>',
    () => "'; DROP TABLE runs; --",
    () => '../../../../etc/passwd',
    () => '%00%zz%',
    () => '\u0000\u0001\u001f\u007f',
    () => '\ud800',
    () => '🙂'.repeat(int(r, 1, Math.max(1, Math.floor(max / 2)))),
    () => '| a | b |\n|---|',
    () => '${process.exit(1)}',
    () => '=HYPERLINK("http://e")',
    () => `${'A'.repeat(int(r, 1, 8))}\r\n\r\nGET / HTTP/1.1`,
    () => String(int(r, -1e9, 1e9)),
    () => '1e309',
    () => 'NaN',
  ];
  return pick(r, kinds)().slice(0, max);
}

/** Any JSON value, nested at most `depth`, arrays of at most `width`. */
export function hostileJson(r: Rand, depth = 3, width = 8): unknown {
  const leaf = [
    () => null,
    () => true,
    () => -1,
    () => 0,
    () => 1.5,
    () => 1e308,
    () => -1e308,
    () => Number.MAX_SAFE_INTEGER + 2,
    () => hostileString(r, 512),
  ];
  if (depth <= 0 || r() < 0.4) return pick(r, leaf)();
  if (r() < 0.5) return Array.from({ length: int(r, 0, width) }, () => hostileJson(r, depth - 1, width));
  const o: Record<string, unknown> = {};
  for (let i = int(r, 0, width); i > 0; i--)
    o[r() < 0.5 ? hostileString(r, 32) : pick(r, SCENARIO_KEYS)] = hostileJson(r, depth - 1, width);
  return o;
}

export const SCENARIO_KEYS = [
  'name',
  'durationSeconds',
  'warmupSeconds',
  'rounds',
  'roundSleepSeconds',
  'serverNode',
  'clientNode',
  'allowSameNode',
  'guardThresholds',
  'sampleIntervalMs',
  'measurements',
  'kind',
  'path',
  'tool',
  'streams',
  'connections',
  'id',
  '__proto__',
  'constructor',
] as const;

/** A valid-looking scenario with one field broken. */
export function brokenScenario(r: Rand): Record<string, unknown> {
  const m: Record<string, unknown> = {
    kind: pick(r, ['throughput', 'http', 'rr', 'latency', 'scale']),
    path: pick(r, ['pod-to-pod', 'service', 'host-to-host']),
  };
  const s: Record<string, unknown> = { name: 'hostile', durationSeconds: 1, measurements: [m] };
  const field = pick(r, [
    'name',
    'durationSeconds',
    'rounds',
    'serverNode',
    'sampleIntervalMs',
    'measurements',
    'm.kind',
    'm.streams',
    'm.connections',
    'm.tool',
    'm.id',
    'm.urlPath',
    'extra',
  ]);
  const bad = pick(r, [hostileString(r, 2048), -1, 1e12, 0.5, null, [], {}, true, 'x'.repeat(300)]);
  if (field.startsWith('m.')) m[field.slice(2)] = bad;
  else if (field === 'measurements') s.measurements = pick(r, [[], 'x', Array.from({ length: 600 }, () => m), null]);
  else if (field === 'extra') s[hostileString(r, 64) || 'extra'] = bad;
  else s[field] = bad;
  return s;
}
