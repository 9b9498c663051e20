import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_COMPARE_RUNS, parseCompareQuery } from '../../../report/compare.js';
import { csvText, mdText } from '../../../report/escape.js';

test('Markdown: what a user typed cannot open a line, a heading, a table cell, a link or HTML', () => {
  const hostile = 'x\n# owned\r\n<script>alert(1)</script> | cell [link](http://e) `code` \\ &amp;\u2028';
  const out = mdText(hostile);
  assert.doesNotMatch(out, /[\n\r\u2028]/);
  assert.doesNotMatch(out, /<script/);
  assert.ok(out.includes('&lt;script&gt;'), out);
  assert.ok(out.includes('\\# owned'));
  assert.ok(out.includes('\\|') && !/[^\\]\|/.test(out), 'every pipe escaped');
  assert.ok(out.includes('\\[link\\]'));
  assert.ok(out.includes('\\`code\\`'));
  assert.ok(out.includes('&amp;amp;'));
  assert.equal(mdText('W_TIME_WAIT (baseline) 6.18'), 'W_TIME_WAIT (baseline) 6.18', 'ordinary text reads as typed');
});

test('CSV: quoted per RFC 4180, and formulas made inert', () => {
  assert.equal(csvText('=HYPERLINK("http://e")'), `"'=HYPERLINK(""http://e"")"`);
  assert.equal(csvText('@SUM(A1)'), "'@SUM(A1)");
  assert.equal(csvText('-12.5'), '-12.5', 'a negative number stays a number');
  assert.equal(csvText('a,b'), '"a,b"');
});

test('compare refuses more than MAX_COMPARE_RUNS runs, naming the field', () => {
  const ids = Array.from({ length: MAX_COMPARE_RUNS + 1 }, (_, i) => `r${i}`).join(',');
  assert.throws(() => parseCompareQuery(new URLSearchParams({ runs: ids })), /runs: at most 10 items, got 11/);
  assert.throws(() => parseCompareQuery(new URLSearchParams({ runs: `a,${'x'.repeat(5000)}` })), /runs: /);
  assert.equal(parseCompareQuery(new URLSearchParams({ runs: 'a,b' })).runs.length, 2);
});
