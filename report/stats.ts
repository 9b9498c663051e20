/**
 * Summaries of repeated rounds of one measurement. A benchmark number without
 * its spread is not a result, so every summary carries the sample standard
 * deviation, the coefficient of variation and a 95% confidence interval of the
 * mean, and the median (robust to one bad round) beside the mean.
 */
import { CniBenchError, ErrorCodes } from '../core/errors.js';

export interface Summary {
  n: number;
  mean: number;
  median: number;
  min: number;
  max: number;
  /** Sample standard deviation (divisor n-1); 0 when n = 1. */
  stdev: number;
  /** stdev / |mean|; 0 when n = 1 or when every value is 0; Infinity when the mean is 0 but values differ. */
  cv: number;
  /** Student-t 95% confidence interval of the mean; null when n < 2. */
  ci95: [number, number] | null;
}

/**
 * Two-sided 95% Student-t critical values t(0.975, df) for df = 1..30, as given
 * by scipy.stats.t.ppf(0.975, df) (scipy 1.17.1), rounded to 12 digits.
 */
const T975: readonly number[] = [
  12.7062047362, 4.30265272975, 3.18244630528, 2.7764451052, 2.57058183564, 2.44691185114, 2.36462425159, 2.3060041352,
  2.2621571628, 2.22813885199, 2.20098516009, 2.17881282967, 2.16036865646, 2.14478668792, 2.13144954556, 2.11990529922,
  2.10981557783, 2.10092204024, 2.09302405441, 2.08596344727, 2.07961384473, 2.0738730679, 2.06865761042, 2.06389856163,
  2.05953855275, 2.05552943864, 2.05183051648, 2.0484071418, 2.04522964213, 2.0422724563,
];

/** Standard normal quantile at 0.975. */
const Z975 = 1.959963984540054;

/**
 * The t critical value a 95% interval needs. Integer df <= 30 come from the
 * table; larger df use the Cornish-Fisher expansion of t in powers of 1/df
 * (Abramowitz & Stegun 26.7.5), whose error is below 1e-7 from df = 30 on.
 * A fractional df below 30 (as Welch's formula gives) is rounded down, which
 * widens the interval slightly: conservative, never optimistic.
 */
export function tQuantile975(df: number): number {
  if (!(df >= 1)) {
    throw new CniBenchError(ErrorCodes.VALIDATION, `t quantile needs degrees of freedom >= 1, got ${df}`, {
      details: { df },
    });
  }
  if (df === Infinity) return Z975;
  if (df <= 30) return T975[Math.floor(df) - 1]!;
  const z = Z975;
  const z2 = z * z;
  const g1 = (z * (z2 + 1)) / 4;
  const g2 = (z * (3 + z2 * (16 + 5 * z2))) / 96;
  const g3 = (z * (-15 + z2 * (17 + z2 * (19 + 3 * z2)))) / 384;
  const g4 = (z * (-945 + z2 * (-1920 + z2 * (1482 + z2 * (776 + 79 * z2))))) / 92160;
  return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4;
}

function median(sorted: readonly number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Summarises one measurement's round values. Refuses empty or non-finite input
 * rather than returning NaN, so a failed round cannot silently become a number.
 */
export function summarise(values: readonly number[]): Summary {
  if (values.length === 0) throw new CniBenchError(ErrorCodes.VALIDATION, 'cannot summarise an empty list of values');
  const bad = values.findIndex((v) => typeof v !== 'number' || !Number.isFinite(v));
  if (bad >= 0) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `cannot summarise non-finite value ${String(values[bad])} at index ${bad}`,
      {
        details: { index: bad },
      },
    );
  }
  const n = values.length;
  const sorted = [...values].sort((a, b) => a - b);
  const mean = values.reduce((a, v) => a + v, 0) / n;
  // Two passes: the squared deviations from the mean, not sum(x^2) - n*mean^2,
  // which cancels catastrophically for large values with a small spread.
  const ss = values.reduce((a, v) => a + (v - mean) ** 2, 0);
  const stdev = n > 1 ? Math.sqrt(ss / (n - 1)) : 0;
  let cv = 0;
  if (n > 1 && stdev > 0) cv = mean === 0 ? Infinity : stdev / Math.abs(mean);
  let ci95: [number, number] | null = null;
  if (n > 1) {
    const half = (tQuantile975(n - 1) * stdev) / Math.sqrt(n);
    ci95 = [mean - half, mean + half];
  }
  return { n, mean, median: median(sorted), min: sorted[0]!, max: sorted[n - 1]!, stdev, cv, ci95 };
}
