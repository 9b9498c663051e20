/**
 * Reference numbers were computed independently with scipy 1.17.1 / numpy 2.4.6
 * in a throwaway venv outside the repo; each block names the exact call.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarise, tQuantile975 } from '../../../report/stats.js';
import { validationMessage } from '../../support/helpers/errors.js';

function close(actual: number, expected: number, tol: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: ${actual} is not within ${tol} of ${expected}`);
}

test('tQuantile975 matches scipy.stats.t.ppf(0.975, df)', () => {
  // scipy.stats.t.ppf(0.975, df) for each df below.
  const ref: [number, number][] = [
    [1, 12.706204736174694],
    [2, 4.302652729749462],
    [5, 2.5705818356363146],
    [10, 2.228138851986274],
    [29, 2.045229642132703],
    [30, 2.0422724563012378],
    [31, 2.039513446396408],
    [45, 2.014103388880846],
    [100, 1.9839715185235518],
    [1000, 1.9623390808264083],
    [1e6, 1.959966356814107],
  ];
  // Far tighter than the 1e-3 promised, so a wrong table entry or coefficient shows.
  for (const [df, t] of ref) close(tQuantile975(df), t, 1e-7, `df=${df}`);
});

test('tQuantile975: fractional df below 30 rounds down (wider interval); df < 1 is refused', () => {
  assert.equal(tQuantile975(7.9), tQuantile975(7));
  assert.ok(tQuantile975(7.9) > tQuantile975(8));
  assert.ok(tQuantile975(30.5) < tQuantile975(30));
  assert.equal(tQuantile975(Infinity), 1.959963984540054);
  for (const df of [0, 0.5, -3, NaN]) validationMessage(() => tQuantile975(df));
});

test('summarise five throughput rounds like numpy and scipy', () => {
  const s = summarise([9.41, 9.38, 9.45, 9.4, 9.43]);
  // numpy: a.mean(), np.median(a), a.std(ddof=1);
  // scipy.stats.t.interval(0.95, n-1, loc=a.mean(), scale=scipy.stats.sem(a)).
  assert.equal(s.n, 5);
  close(s.mean, 9.414, 1e-12, 'mean');
  assert.equal(s.median, 9.41);
  assert.equal(s.min, 9.38);
  assert.equal(s.max, 9.45);
  close(s.stdev, 0.027018512172212017, 1e-12, 'stdev');
  close(s.cv, 0.027018512172212017 / 9.414, 1e-12, 'cv');
  assert.ok(s.ci95);
  close(s.ci95[0], 9.380452086150735, 1e-9, 'ci low');
  close(s.ci95[1], 9.447547913849265, 1e-9, 'ci high');
});

test('summarise an even-length, skewed set: median averages the middle pair', () => {
  const s = summarise([12.1, 15.3, 11.8, 14.2, 13.0, 16.4, 12.7, 40.0]);
  // np.median([...]) = 13.6 (mean of 13.0 and 14.2).
  close(s.median, 13.6, 1e-12, 'median');
  const s7 = summarise([12.1, 15.3, 11.8, 14.2, 13.0, 16.4, 12.7]);
  // numpy mean/median/std(ddof=1) and scipy.stats.t.interval(0.95, 6, loc=mean, scale=sem).
  close(s7.mean, 13.642857142857144, 1e-12, 'mean');
  assert.equal(s7.median, 13.0);
  close(s7.stdev, 1.7193575765937914, 1e-12, 'stdev');
  assert.ok(s7.ci95);
  close(s7.ci95[0], 12.05271659830596, 1e-9, 'ci low');
  close(s7.ci95[1], 15.232997687408329, 1e-9, 'ci high');
});

test('summarise keeps precision for large values with a small spread', () => {
  const s = summarise([1e9 + 1, 1e9 + 2, 1e9 + 3]);
  close(s.stdev, 1, 1e-9, 'stdev');
});

test('one value: stdev and cv 0, no interval', () => {
  assert.deepEqual(summarise([42]), { n: 1, mean: 42, median: 42, min: 42, max: 42, stdev: 0, cv: 0, ci95: null });
});

test('cv is 0 for identical zeros and Infinity for a zero mean with spread', () => {
  assert.equal(summarise([0, 0, 0]).cv, 0);
  assert.equal(summarise([-1, 1]).cv, Infinity);
  assert.equal(summarise([-2, -4]).cv, Math.SQRT2 / 3);
});

test('empty and non-finite input is refused, naming the bad index', () => {
  validationMessage(() => summarise([]));
  assert.match(
    validationMessage(() => summarise([1, NaN, 3])),
    /index 1/,
  );
  assert.match(
    validationMessage(() => summarise([1, 2, Infinity])),
    /index 2/,
  );
});
