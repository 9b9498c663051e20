import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LatencyHistogram, mergeHistograms } from '../../../core/histogram.js';
import { Histogram } from '../../../gen/cnibench/v1/agent.js';
import { validationMessage } from '../../support/helpers/errors.js';

/** A small seeded generator (64-bit LCG, top 53 bits) so failures reproduce. */
function seeded(seed: bigint): () => number {
  let state = seed;
  return () => {
    state = (state * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return Number(state >> 11n) / 2 ** 53;
  };
}

/** Log-normal latencies around 500 µs with a heavy tail, some below 1 µs. */
function latencies(n: number, seed: bigint): number[] {
  const rand = seeded(seed);
  const out: number[] = [];
  for (let k = 0; k < n; k++) {
    const normal = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    out.push(500 * Math.exp(1.5 * normal));
  }
  return out;
}

/** Nearest-rank percentile of a sorted array: the value at rank ceil(p/100 * n). */
function exactPercentile(sorted: number[], p: number): number {
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]!;
}

test('bucket scheme: boundaries, inverse and the [0,1) bucket', () => {
  const h = new LatencyHistogram();
  assert.equal(h.indexOf(0), 0);
  assert.equal(h.indexOf(0.999), 0);
  assert.equal(h.indexOf(1), 1);
  assert.equal(h.indexOf(2), 1 + 128);
  assert.equal(h.indexOf(3), 1 + 128 + 64);
  assert.equal(h.indexOf(1023.99), 1 + 9 * 128 + 127);
  assert.equal(h.lower(1 + 10 * 128), 1024);
  for (let i = 0; i < 128 * 40; i++) assert.equal(h.indexOf(h.lower(i)), i, `index ${i}`);
  for (const v of latencies(2000, 7n)) {
    const i = h.indexOf(v);
    assert.ok(h.lower(i) <= v && v < h.lower(i + 1), `${v} outside bucket ${i}`);
    if (v >= 1) assert.ok((h.lower(i + 1) - h.lower(i)) / h.lower(i) <= 1 / 128);
  }
});

test('percentiles of 100k seeded samples are within 1% of the exact sorted-array percentiles', () => {
  const samples = latencies(100_000, 20240601n);
  const h = LatencyHistogram.fromSamples(samples);
  const sorted = [...samples].sort((a, b) => a - b);
  assert.equal(h.total, 100_000);
  assert.equal(h.min, sorted[0]);
  assert.equal(h.max, sorted[sorted.length - 1]);
  for (const p of [0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99]) {
    const exact = exactPercentile(sorted, p);
    const est = h.percentile(p);
    assert.ok(Math.abs(est - exact) / exact < 0.01, `p${p}: ${est} vs exact ${exact}`);
  }
  assert.equal(h.percentile(0), sorted[0]);
  assert.equal(h.percentile(100), sorted[sorted.length - 1]);
  const mean = samples.reduce((a, v) => a + v, 0) / samples.length;
  assert.ok(Math.abs(h.mean - mean) / mean < 1e-9);
});

test('percentiles agree with numpy.percentile(method="inverted_cdf") on a small set', () => {
  const small = [3.2, 150.0, 47.5, 0.4, 1200.0, 88.8, 9.9, 512.0, 33.3, 2.5, 64.0, 777.7];
  // numpy.percentile(small, q, method='inverted_cdf') for q = 10, 25, 50, 75, 90, 99 (numpy 2.4.6).
  const ref: [number, number][] = [
    [10, 2.5],
    [25, 3.2],
    [50, 47.5],
    [75, 150.0],
    [90, 777.7],
    [99, 1200.0],
  ];
  const h = LatencyHistogram.fromSamples(small);
  for (const [q, v] of ref)
    assert.ok(Math.abs(h.percentile(q) - v) / v <= 1 / 256, `p${q}: ${h.percentile(q)} vs ${v}`);
});

test('merging two histograms equals the histogram of the concatenated samples, exactly', () => {
  // Values on a 1/8 µs grid keep every sum exact, so even sumUs must match bit for bit.
  const grid = (xs: number[]) => xs.map((v) => Math.round(v * 8) / 8);
  const a = grid(latencies(30_000, 1n));
  const b = grid(latencies(20_000, 2n));
  const merged = LatencyHistogram.fromSamples(a).merge(LatencyHistogram.fromSamples(b));
  assert.deepEqual(merged.toProto(), LatencyHistogram.fromSamples([...a, ...b]).toProto());
  const viaWire = mergeHistograms([
    LatencyHistogram.fromSamples(a).toProto(),
    LatencyHistogram.fromSamples(b).toProto(),
  ]);
  assert.deepEqual(viaWire?.toProto(), merged.toProto());
  assert.equal(mergeHistograms([]), undefined);
});

test('merging empty histograms changes nothing; different subBucketBits refuse to merge', () => {
  const h = LatencyHistogram.fromSamples([5, 10, 20]);
  const before = h.toProto();
  h.merge(new LatencyHistogram());
  assert.deepEqual(h.toProto(), before);
  const empty = new LatencyHistogram().merge(new LatencyHistogram());
  assert.equal(empty.total, 0);
  assert.ok(Number.isNaN(empty.percentile(50)) && Number.isNaN(empty.min) && Number.isNaN(empty.mean));
  assert.match(
    validationMessage(() => h.merge(new LatencyHistogram(5))),
    /subBucketBits/,
  );
});

test('toProto/fromProto round-trip, through the protobuf wire encoding too', () => {
  const h = LatencyHistogram.fromSamples(latencies(5000, 99n));
  const proto = h.toProto();
  assert.deepEqual(
    proto.indexes,
    [...proto.indexes].sort((x, y) => x - y),
  );
  const back = LatencyHistogram.fromProto(Histogram.decode(Histogram.encode(proto).finish()));
  assert.deepEqual(back.toProto(), proto);
  for (const p of [1, 50, 99]) assert.equal(back.percentile(p), h.percentile(p));
  assert.equal(back.mean, h.mean);
  const empty = LatencyHistogram.fromProto(
    Histogram.decode(Histogram.encode(new LatencyHistogram().toProto()).finish()),
  );
  assert.equal(empty.total, 0);
});

test('fromProto refuses malformed input', () => {
  const good = LatencyHistogram.fromSamples([3, 7, 7, 100]).toProto();
  const bad: [string, Partial<Histogram>, RegExp][] = [
    ['length mismatch', { counts: good.counts.slice(1) }, /same length/],
    ['negative count', { counts: [-1, 2, 3], total: 4 }, /non-negative integers/],
    ['fractional count', { counts: [1.5, 1.5, 1], total: 4 }, /non-negative integers/],
    ['total mismatch', { total: 5 }, /total/],
    ['duplicate index', { indexes: [good.indexes[0]!, good.indexes[0]!, good.indexes[2]!] }, /twice/],
    ['min outside buckets', { minUs: 1 }, /outside/],
    ['max outside buckets', { maxUs: 1e6 }, /outside/],
    ['negative min', { minUs: -1 }, /minUs/],
    ['NaN sum', { sumUs: NaN }, /sumUs/],
    ['absurd subBucketBits', { subBucketBits: 40 }, /subBucketBits/],
    ['index overflowing double range', { indexes: [good.indexes[0]!, good.indexes[1]!, 2 ** 31] }, /index/],
  ];
  assert.ok(LatencyHistogram.fromProto(good));
  for (const [what, patch, re] of bad)
    assert.match(
      validationMessage(() => LatencyHistogram.fromProto({ ...good, ...patch })),
      re,
      what,
    );
});

test('negative, NaN and infinite values are refused', () => {
  const h = new LatencyHistogram();
  for (const v of [-1, NaN, Infinity]) validationMessage(() => h.record(v));
  validationMessage(() => h.record(5, -1));
  validationMessage(() => h.record(5, 0.5));
  validationMessage(() => h.recordRange(10, 5, 3));
  validationMessage(() => h.recordRange(-1, 5, 3));
  validationMessage(() => h.percentile(101));
  assert.equal(h.total, 0);
});

test('recordRange conserves counts and spreads them in proportion to overlap', () => {
  const h = new LatencyHistogram();
  h.recordRange(100, 200, 1000);
  assert.equal(h.total, 1000);
  const proto = h.toProto();
  assert.equal(
    proto.counts.reduce((a, c) => a + c, 0),
    1000,
  );
  // [100,128) is 28% of the range: exactly 280 values land below 128.
  const below128 = proto.indexes.reduce((a, i, k) => (h.lower(i) < 128 ? a + proto.counts[k]! : a), 0);
  assert.equal(below128, 280);
  assert.ok(Math.abs(h.percentile(50) - 150) / 150 < 0.01, `median ${h.percentile(50)}`);
  assert.ok(h.min >= 100 && h.max <= 200);
  assert.ok(Math.abs(h.mean - 150) < 0.5, `mean ${h.mean}`);

  const wide = new LatencyHistogram();
  for (const [lo, hi, n] of [
    [0, 1e6, 7],
    [0.2, 0.7, 3],
    [1000, 1000.001, 11],
    [5, 5, 4],
  ] as const)
    wide.recordRange(lo, hi, n);
  assert.equal(wide.total, 25);
  assert.equal(
    wide.toProto().counts.reduce((a, c) => a + c, 0),
    25,
  );
  assert.ok(LatencyHistogram.fromProto(wide.toProto()), 'a spread histogram stays valid on the wire');
});

test('recordRange puts a few values at the centres of equal shares of the range', () => {
  // Three values over [100, 200): the fairest placement is one per third, at 116.7, 150 and 183.3.
  const h = new LatencyHistogram();
  h.recordRange(100, 200, 3);
  for (const [p, v] of [
    [33, 100 + 100 / 6],
    [50, 150],
    [99, 200 - 100 / 6],
  ] as const) {
    assert.ok(Math.abs(h.percentile(p) - v) / v < 0.01, `p${p}: ${h.percentile(p)} vs ${v}`);
  }
});

test('a zero-width range is the same as recording the value', () => {
  const a = new LatencyHistogram();
  a.recordRange(42, 42, 3);
  const b = new LatencyHistogram();
  b.record(42, 3);
  assert.deepEqual(a.toProto(), b.toProto());
});

test("fromRankedPoints: each point is one sample, the gaps between ranks are spread, disorder is the caller's error", () => {
  const h = LatencyHistogram.fromRankedPoints(
    [
      { rank: 1, us: 10 },
      { rank: 50, us: 100 },
      { rank: 50, us: 100 },
      { rank: 100, us: 1000 },
    ],
    (r) => new Error(r),
  );
  assert.equal(h.total, 100);
  assert.equal(h.min, 10);
  assert.equal(h.max, 1000);
  assert.ok(Math.abs(h.percentile(50) - 100) / 100 < 0.01, String(h.percentile(50)));
  assert.throws(
    () =>
      LatencyHistogram.fromRankedPoints(
        [
          { rank: 1, us: 50 },
          { rank: 2, us: 40 },
        ],
        (r) => new Error(`bad: ${r}`),
      ),
    /bad: percentile points not ascending/,
  );
  assert.equal(LatencyHistogram.fromRankedPoints([], (r) => new Error(r)).total, 0);
});
