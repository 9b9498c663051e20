/**
 * Turns a measurement's per-round results into the metrics of its report row:
 * rates as the median of the rounds, latency percentiles from the histograms
 * of all rounds merged (never averaged), each metric with its per-round
 * values and their dispersion. Pure.
 */
import { LatencyHistogram, mergeHistograms } from '../core/histogram.js';
import type { Histogram, JobResult, Latency } from '../gen/cnibench/v1/agent.js';
import type { Metric, MetricName } from './metrics-model.js';
import { summarise } from './stats.js';

const PERCENTILES: readonly [MetricName, number][] = [
  ['p50', 50],
  ['p90', 90],
  ['p99', 99],
  ['p99.9', 99.9],
];

function median(values: number[]): number {
  return summarise(values).median;
}

function rate(name: MetricName, unit: string, higherIsBetter: boolean, perRound: number[]): Metric {
  return {
    name,
    unit,
    higherIsBetter,
    value: median(perRound),
    perRound,
    summary: summarise(perRound),
    source: 'rounds-median',
  };
}

/**
 * Latency percentiles in `unit` ('ms' or 'us'): from merged histograms when
 * every round has one, else the median of the percentiles each round's tool
 * printed (said in `source`), else nothing. A percentile above the highest one
 * a round's tool printed is left out rather than extrapolated.
 */
export function latencyMetrics(
  rounds: { histogram?: Histogram | undefined; latency?: Latency | undefined }[],
  unit: 'ms' | 'us',
): Metric[] {
  const scale = unit === 'ms' ? 1e-3 : 1;
  const hs = rounds.map((r) => r.histogram).filter((h): h is Histogram => h !== undefined && h.total > 0);
  const out: Metric[] = [];
  if (hs.length === rounds.length && hs.length > 0) {
    const merged = mergeHistograms(hs) as LatencyHistogram;
    const each = hs.map((h) => LatencyHistogram.fromProto(h));
    // A tool that prints only some percentiles (netperf stops at p99) gives a histogram rebuilt from
    // those points: above its highest printed percentile it only interpolates toward the max.
    const resolved = Math.min(
      ...rounds.map((r) =>
        r.latency?.percentiles.length ? Math.max(...r.latency.percentiles.map((x) => x.percentile)) : Infinity,
      ),
    );
    for (const [name, p] of PERCENTILES) {
      if (p > resolved) continue;
      const perRound = each.map((h) => h.percentile(p) * scale);
      out.push({
        name,
        unit,
        higherIsBetter: false,
        value: merged.percentile(p) * scale,
        perRound,
        summary: summarise(perRound),
        source: 'merged-histogram',
      });
    }
    return out;
  }
  for (const [name, p] of PERCENTILES) {
    const perRound = rounds
      .map((r) => r.latency?.percentiles.find((x) => x.percentile === p)?.valueUs)
      .filter((v): v is number => v !== undefined)
      .map((v) => v * scale);
    if (perRound.length === rounds.length && perRound.length > 0) {
      out.push({
        name,
        unit,
        higherIsBetter: false,
        value: median(perRound),
        perRound,
        summary: summarise(perRound),
        source: 'per-round-median',
      });
    }
  }
  return out;
}

/** Every metric of a row, headline first; [] without results. */
export function rowMetrics(results: readonly JobResult[]): Metric[] {
  const kinds = results.map((r) => r.measurement?.kind).filter((k) => k !== undefined);
  if (kinds.length === 0 || kinds.length !== results.length) return [];
  const first = kinds[0];
  if (first?.$case === 'throughput') {
    const t = kinds.map((k) => (k.$case === 'throughput' ? k.value : undefined)).filter((v) => v !== undefined);
    const out = [
      rate(
        'throughput',
        'Gbit/s',
        true,
        t.map((v) => v.bitsPerSecond / 1e9),
      ),
    ];
    // A UDP round that counted no datagrams has no loss or jitter to report (not 0%).
    if (first.value.protocol === 'udp' && t.every((v) => v.packets > 0)) {
      out.push(
        rate(
          'loss',
          '%',
          false,
          t.map((v) => (v.packets > 0 ? (100 * v.lostPackets) / v.packets : 0)),
        ),
      );
      out.push(
        rate(
          'jitter',
          'ms',
          false,
          t.map((v) => v.jitterMs),
        ),
      );
    }
    return out;
  }
  if (first?.$case === 'http') {
    const h = kinds.map((k) => (k.$case === 'http' ? k.value : undefined)).filter((v) => v !== undefined);
    const rps = rate(
      'rps',
      'req/s',
      true,
      h.map((v) => v.requestsPerSecond),
    );
    const lat = latencyMetrics(h, 'ms');
    // At a fixed rate the rate is an input: latency is the result.
    return first.value.targetQps > 0 ? [...lat, rps] : [rps, ...lat];
  }
  if (first?.$case === 'rr') {
    const r = kinds.map((k) => (k.$case === 'rr' ? k.value : undefined)).filter((v) => v !== undefined);
    return [
      ...latencyMetrics(r, 'us'),
      rate(
        'tps',
        'trans/s',
        true,
        r.map((v) => v.transactionsPerSecond),
      ),
    ];
  }
  return [];
}
