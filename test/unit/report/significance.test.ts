/**
 * Reference numbers were computed independently with scipy 1.17.1 in a
 * throwaway venv outside the repo; each block names the exact call.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareRounds, regularizedIncompleteBeta, studentTCdf, welchPValue } from '../../../report/significance.js';
import { summarise } from '../../../report/stats.js';
import { validationMessage } from '../../support/helpers/errors.js';

function relClose(actual: number, expected: number, rel: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= rel * Math.abs(expected), `${what}: ${actual} vs ${expected}`);
}

// Round values of one measurement, used throughout.
const A_BASE = [9.41, 9.38, 9.45, 9.4, 9.43];
const A_CAND = [9.12, 9.15, 9.09, 9.18, 9.11];
const B_BASE = [100, 104, 98, 101, 97];
const B_CAND = [101, 99, 103, 100, 102];
const C_BASE = [1000, 1001, 1002, 1000, 1001, 1002];
const C_CAND = [1010, 1011, 1012, 1010, 1011, 1012];
const D_BASE = [12.1, 15.3, 11.8, 14.2, 13.0, 16.4, 12.7];
const D_CAND = [18.2, 21.5, 17.9, 25.3];

test('regularized incomplete beta matches scipy.special.betainc(a, b, x)', () => {
  const ref: [number, number, number, number][] = [
    // [x, a, b, scipy.special.betainc(a, b, x)]
    [0.3, 2, 3, 0.34829999999999994],
    [0.9, 0.5, 0.5, 0.7951672353008665],
    [0.05, 10, 0.5, 1.761178743259099e-14],
    [0.7, 25, 0.5, 2.6390055490798263e-5],
    [0.999, 3.5, 0.5, 0.9356322688440224],
  ];
  for (const [x, a, b, v] of ref) relClose(regularizedIncompleteBeta(x, a, b), v, 1e-9, `I(${x}; ${a}, ${b})`);
  assert.equal(regularizedIncompleteBeta(0, 2, 3), 0);
  assert.equal(regularizedIncompleteBeta(1, 2, 3), 1);
  validationMessage(() => regularizedIncompleteBeta(1.5, 2, 3));
  validationMessage(() => regularizedIncompleteBeta(0.5, 0, 3));
});

test('Student t CDF matches scipy.stats.t.cdf(t, df), fractional df included', () => {
  const ref: [number, number, number][] = [
    // [t, df, scipy.stats.t.cdf(t, df)]
    [0.5, 1, 0.6475836176504333],
    [2.0, 3, 0.9303370157205785],
    [-1.3, 7.5, 0.11606338940780439],
    [3.1, 12.25, 0.9955049628402464],
    [0.0, 4, 0.5],
    [5.0, 2.7, 0.990149580536768],
    [-2.2, 60, 0.01583462373628845],
  ];
  for (const [t, df, v] of ref) relClose(studentTCdf(t, df), v, 1e-9, `F(${t}; ${df})`);
  assert.equal(studentTCdf(Infinity, 3), 1);
  assert.equal(studentTCdf(-Infinity, 3), 0);
});

test('Welch p-values match scipy.stats.ttest_ind(candidate, baseline, equal_var=False)', () => {
  const ref: [number[], number[], number][] = [
    // scipy.stats.ttest_ind(cand, base, equal_var=False).pvalue (df 7.48, 6.4, 10.0, 3.87)
    [A_BASE, A_CAND, 1.0689970713926996e-6],
    [B_BASE, B_CAND, 0.5044221395803009],
    [C_BASE, C_CAND, 2.941378924026209e-9],
    [D_BASE, D_CAND, 0.019747269039063233],
  ];
  for (const [base, cand, p] of ref) relClose(welchPValue(summarise(base), summarise(cand)), p, 1e-7, `p for ${base}`);
  // Zero spread on both sides: degenerate, decided by the means alone.
  assert.equal(welchPValue(summarise([5, 5, 5]), summarise([5, 5])), 1);
  assert.equal(welchPValue(summarise([5, 5, 5]), summarise([6, 6])), 0);
});

test('a clear throughput drop is "worse", and the same drop in latency is "better"', () => {
  const worse = compareRounds(A_BASE, A_CAND, { higherIsBetter: true });
  assert.equal(worse.verdict, 'worse');
  relClose(worse.relDiff, (9.12 - 9.41) / 9.41, 1e-12, 'relDiff');
  assert.ok(worse.pValue !== null && worse.pValue < 1e-5);
  assert.match(worse.reason, /p=1\.1e-6/);
  assert.match(worse.reason, /intervals do not overlap/);
  assert.equal(worse.baseline.median, 9.41);
  assert.equal(worse.candidate.median, 9.12);
  assert.equal(compareRounds(A_BASE, A_CAND, { higherIsBetter: false }).verdict, 'better');
  assert.equal(compareRounds(A_CAND, A_BASE, { higherIsBetter: true }).verdict, 'better');
});

test('overlapping noisy rounds are "within noise", with every reason given', () => {
  const c = compareRounds(B_BASE, B_CAND, { higherIsBetter: true });
  assert.equal(c.verdict, 'within noise');
  assert.equal(
    c.reason,
    'p=0.504 is not below alpha 0.05; difference 1% is below the 3% noise floor; intervals overlap',
  );
});

test('a highly significant 1% difference is still below the 3% noise floor', () => {
  const c = compareRounds(C_BASE, C_CAND, { higherIsBetter: true });
  assert.equal(c.verdict, 'within noise');
  assert.ok(c.pValue! < 1e-8);
  assert.equal(c.reason, 'difference 1% is below the 3% noise floor');
  // With a lower floor the same data is a real improvement.
  assert.equal(compareRounds(C_BASE, C_CAND, { higherIsBetter: true, noiseFloor: 0.005 }).verdict, 'better');
});

test('p < alpha and a large difference still need disjoint intervals', () => {
  // scipy: p = 0.0197; CIs [12.053, 15.233] and [15.221, 26.229] overlap by 0.01.
  const c = compareRounds(D_BASE, D_CAND, { higherIsBetter: false });
  assert.equal(c.verdict, 'within noise');
  assert.equal(c.reason, 'intervals overlap');
  // A stricter alpha adds the p-value reason.
  assert.match(
    compareRounds(D_BASE, D_CAND, { higherIsBetter: false, alpha: 0.01 }).reason,
    /^p=0\.020 is not below alpha 0\.01; intervals overlap$/,
  );
});

test('single rounds: "noise unknown" unless far above the noise floor', () => {
  const small = compareRounds([100], [110], { higherIsBetter: true });
  assert.equal(small.verdict, 'noise unknown');
  assert.equal(small.pValue, null);
  assert.match(small.reason, /single round/);
  const big = compareRounds([100], [120], { higherIsBetter: true });
  assert.equal(big.verdict, 'better');
  assert.equal(big.reason, 'single round; difference far above noise floor');
  assert.equal(compareRounds([100, 101, 99], [80], { higherIsBetter: true }).verdict, 'worse');
  // Exactly 5x the floor is not "far above".
  assert.equal(compareRounds([100], [115], { higherIsBetter: true }).verdict, 'noise unknown');
  assert.equal(compareRounds([100], [110], { higherIsBetter: true, noiseFloor: 0.01 }).verdict, 'better');
});

test('a zero baseline median gives an infinite relative difference, not NaN', () => {
  const c = compareRounds([0], [3], { higherIsBetter: false });
  assert.equal(c.relDiff, Infinity);
  assert.equal(c.verdict, 'worse');
  assert.equal(compareRounds([0, 0], [0, 0], { higherIsBetter: true }).relDiff, 0);
});

test('bad options and bad values are refused', () => {
  validationMessage(() => compareRounds([1, 2], [1, 2], { higherIsBetter: true, noiseFloor: -0.1 }));
  validationMessage(() => compareRounds([1, 2], [1, 2], { higherIsBetter: true, alpha: 0 }));
  validationMessage(() => compareRounds([1, 2], [1, 2], { higherIsBetter: true, alpha: 1 }));
  validationMessage(() => compareRounds([], [1, 2], { higherIsBetter: true }));
  validationMessage(() => compareRounds([1, 2], [1, NaN], { higherIsBetter: true }));
});
