/**
 * Decides whether a candidate's rounds of one measurement differ from a
 * baseline's by more than noise. A dataplane comparison that calls every 1%
 * wobble a win is worse than none, so "better"/"worse" needs three things at
 * once: Welch's t-test says so, the difference clears a relative noise floor,
 * and the two 95% confidence intervals are disjoint. With a single round there
 * is no noise estimate at all, and the verdict says so.
 */
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { type Summary, summarise } from './stats.js';

export type Verdict = 'better' | 'worse' | 'within noise' | 'noise unknown';

export interface Comparison {
  baseline: Summary;
  candidate: Summary;
  /** (candidate.median - baseline.median) / |baseline.median|; ±Infinity when the baseline median is 0. */
  relDiff: number;
  /** Welch's two-sided t-test; null when either side has n < 2. */
  pValue: number | null;
  verdict: Verdict;
  /** Why, as a sentence for a report. */
  reason: string;
}

export interface CompareOptions {
  higherIsBetter: boolean;
  /** Relative difference below which nothing counts as a change; default 0.03. */
  noiseFloor?: number;
  /** Significance level of the t-test; default 0.05. */
  alpha?: number;
}

/** With one round, a difference this many noise floors wide is still reported. */
const SINGLE_ROUND_FACTOR = 5;

// ln Γ(x) for x > 0 by the Lanczos approximation (g = 7, 9 terms; ~15 digits),
// with the reflection formula below 1/2.
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

function lnGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lnGamma(1 - x);
  const y = x - 1;
  let a = LANCZOS[0]!;
  for (let k = 1; k < LANCZOS.length; k++) a += LANCZOS[k]! / (y + k);
  const t = y + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(a);
}

/**
 * Continued fraction for the incomplete beta function, evaluated with the
 * modified Lentz method; converges quickly for x < (a + 1) / (a + b + 2).
 */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const TINY = 1e-300;
  const EPS = 1e-15;
  const guard = (v: number): number => (Math.abs(v) < TINY ? TINY : v);
  let c = 1;
  let d = 1 / guard(1 - ((a + b) * x) / (a + 1));
  let h = d;
  for (let m = 1; m <= 10000; m++) {
    const m2 = 2 * m;
    // Even step: d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)).
    const even = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 / guard(1 + even * d);
    c = guard(1 + even / c);
    h *= d * c;
    // Odd step: d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    const odd = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 / guard(1 + odd * d);
    c = guard(1 + odd / c);
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) return h;
  }
  throw new CniBenchError(ErrorCodes.INTERNAL, `incomplete beta did not converge for a=${a} b=${b} x=${x}`);
}

/** Regularized incomplete beta I_x(a, b). */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (!(a > 0 && b > 0) || !(x >= 0 && x <= 1)) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `incomplete beta needs a, b > 0 and x in [0, 1], got a=${a} b=${b} x=${x}`,
    );
  }
  if (x === 0 || x === 1) return x;
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  // Use the fraction where it converges fast; otherwise the symmetry I_x(a,b) = 1 - I_{1-x}(b,a).
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(a, b, x)) / a;
  return 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b;
}

/** Student t CDF P(T <= t) with df > 0 degrees of freedom (df may be fractional). */
export function studentTCdf(t: number, df: number): number {
  if (!(df > 0)) throw new CniBenchError(ErrorCodes.VALIDATION, `t distribution needs df > 0, got ${df}`);
  if (Number.isNaN(t)) return NaN;
  if (t === Infinity) return 1;
  if (t === -Infinity) return 0;
  const tail = 0.5 * regularizedIncompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t > 0 ? 1 - tail : tail;
}

/**
 * Welch's unequal-variance t-test, two-sided, from two summaries with n >= 2.
 * When both sides have zero spread the test is degenerate: p = 1 for equal
 * means and 0 for different ones.
 */
export function welchPValue(a: Summary, b: Summary): number {
  if (a.n < 2 || b.n < 2)
    throw new CniBenchError(ErrorCodes.VALIDATION, 'Welch t-test needs at least two values on each side');
  const va = (a.stdev * a.stdev) / a.n;
  const vb = (b.stdev * b.stdev) / b.n;
  const se2 = va + vb;
  if (se2 === 0) return a.mean === b.mean ? 1 : 0;
  const t = (b.mean - a.mean) / Math.sqrt(se2);
  const df = (se2 * se2) / ((va * va) / (a.n - 1) + (vb * vb) / (b.n - 1));
  return Math.min(1, regularizedIncompleteBeta(df / (df + t * t), df / 2, 0.5));
}

function pct(x: number): string {
  return `${Number((x * 100).toFixed(2))}%`;
}

function formatP(p: number): string {
  return p >= 0.001 ? `p=${p.toFixed(3)}` : `p=${p.toExponential(1)}`;
}

function checkOptions(noiseFloor: number, alpha: number): void {
  if (!(Number.isFinite(noiseFloor) && noiseFloor >= 0)) {
    throw new CniBenchError(ErrorCodes.VALIDATION, `noiseFloor must be a finite number >= 0, got ${noiseFloor}`, {
      details: { noiseFloor },
    });
  }
  if (!(alpha > 0 && alpha < 1)) {
    throw new CniBenchError(ErrorCodes.VALIDATION, `alpha must be in (0, 1), got ${alpha}`, { details: { alpha } });
  }
}

function relativeDifference(baseline: number, candidate: number): number {
  if (baseline === 0) return candidate === 0 ? 0 : Math.sign(candidate) * Infinity;
  return (candidate - baseline) / Math.abs(baseline);
}

function direction(relDiff: number, higherIsBetter: boolean): 'better' | 'worse' {
  return relDiff > 0 === higherIsBetter ? 'better' : 'worse';
}

/**
 * Compares baseline and candidate round values of one measurement. Throws
 * E_VALIDATION for empty or non-finite values or bad options.
 */
export function compareRounds(
  baseline: readonly number[],
  candidate: readonly number[],
  opts: CompareOptions,
): Comparison {
  const noiseFloor = opts.noiseFloor ?? 0.03;
  const alpha = opts.alpha ?? 0.05;
  checkOptions(noiseFloor, alpha);
  const b = summarise(baseline);
  const c = summarise(candidate);
  const relDiff = relativeDifference(b.median, c.median);
  const base = { baseline: b, candidate: c, relDiff };
  const size = Math.abs(relDiff);

  if (b.n < 2 || c.n < 2) {
    if (size > SINGLE_ROUND_FACTOR * noiseFloor) {
      return {
        ...base,
        pValue: null,
        verdict: direction(relDiff, opts.higherIsBetter),
        reason: 'single round; difference far above noise floor',
      };
    }
    const reason = `single round, so noise is unknown; difference ${pct(size)} is not above ${SINGLE_ROUND_FACTOR}× the ${pct(noiseFloor)} noise floor`;
    return { ...base, pValue: null, verdict: 'noise unknown', reason };
  }

  const pValue = welchPValue(b, c);
  const overlap = b.ci95![0] <= c.ci95![1] && c.ci95![0] <= b.ci95![1];
  const why: string[] = [];
  if (!(pValue < alpha)) why.push(`${formatP(pValue)} is not below alpha ${alpha}`);
  if (size < noiseFloor) why.push(`difference ${pct(size)} is below the ${pct(noiseFloor)} noise floor`);
  if (overlap) why.push('intervals overlap');
  // Medians and means moving opposite ways means a few rounds dominate; do not pick a side.
  if (why.length === 0 && Math.sign(c.mean - b.mean) !== Math.sign(relDiff))
    why.push('median and mean moved in opposite directions');
  if (why.length > 0) return { ...base, pValue, verdict: 'within noise', reason: why.join('; ') };
  const reason = `${formatP(pValue)}; difference ${pct(size)} is above the ${pct(noiseFloor)} noise floor; intervals do not overlap`;
  return { ...base, pValue, verdict: direction(relDiff, opts.higherIsBetter), reason };
}
