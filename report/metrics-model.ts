/**
 * The numbers a report row carries, in the one shape that the report, the
 * comparison and the exporters share. A metric keeps every round's value, so
 * dispersion and significance are computed from raw data, and latency
 * percentiles come from histograms merged over all rounds (never averaged).
 */
import type { Guard } from './guards.js';
import type { Summary } from './stats.js';

export type MetricName =
  | 'throughput'
  | 'rps'
  | 'tps'
  | 'loss'
  | 'jitter'
  | 'p50'
  | 'p90'
  | 'p99'
  | 'p99.9'
  // CPU per unit of work (cpu-cost.ts): CPU-seconds per Gbit moved, per 1,000 requests or connections.
  | 'cpu-per-gbit'
  | 'cpu-per-1k';

export interface Metric {
  name: MetricName;
  unit: string;
  higherIsBetter: boolean;
  /**
   * The headline value: the median of the rounds for rates; for percentiles,
   * the percentile of the histogram merged over all rounds (or the median of
   * per-round values when the tool gives no histogram, said in `source`).
   */
  value: number;
  /** One value per measured round, in round order (per-round percentiles for latency metrics). */
  perRound: number[];
  /** Dispersion of perRound; null without rounds. */
  summary: Summary | null;
  source: 'rounds-median' | 'merged-histogram' | 'per-round-median';
}

export type { Guard };
