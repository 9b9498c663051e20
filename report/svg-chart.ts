/**
 * Two small SVG charts drawn by hand (no chart library, nothing fetched): a
 * line chart over categorical steps with 95% interval whiskers and marked
 * crossovers, and horizontal bars with intervals. Every element a test or a
 * reader looks for is named: `g.series[data-series]`, `circle.point[data-x][data-y]`,
 * `line.ci`, `g.crossover[data-x]`, `rect.bar[data-value]`. Text goes through
 * htmlText. Pure.
 */
import { htmlText as h } from './escape.js';

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];

export interface LinePoint {
  /** Index into the chart's x categories. */
  x: number;
  y: number;
  lo?: number;
  hi?: number;
}

export interface LineChart {
  title: string;
  xLabel: string;
  yLabel: string;
  /** Labels of the categorical x positions (e.g. Service counts). */
  xs: string[];
  series: { name: string; points: LinePoint[] }[];
  /** Vertical marks at fractional x positions (a crossover between two steps). */
  marks?: { x: number; label: string }[];
}

const W = 720;
const H = 320;
const M = { l: 70, r: 20, t: 36, b: 56 };

function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const f of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (f * p >= v) return f * p;
  return 10 * p;
}

export function tick(v: number): string {
  if (Math.abs(v) >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (Math.abs(v) >= 1e4) return `${+(v / 1e3).toPrecision(3)}k`;
  return `${+v.toPrecision(4)}`.replace(/^(-?\d+)\.?0*$/, '$1');
}

function yAxis(max: number, x0: number, x1: number, yOf: (v: number) => number): string {
  let out = '';
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    const y = yOf(v).toFixed(1);
    out += `<line class="grid" x1="${x0}" x2="${x1}" y1="${y}" y2="${y}" stroke="#ddd"/>`;
    out += `<text x="${x0 - 6}" y="${y}" text-anchor="end" dominant-baseline="middle" font-size="11">${h(tick(v))}</text>`;
  }
  return out;
}

function legend(names: string[], x: number, y: number): string {
  return names
    .map(
      (n, i) =>
        `<g class="legend-item" transform="translate(${x + (i % 3) * 220},${y + Math.floor(i / 3) * 14})"><rect width="10" height="10" fill="${PALETTE[i % PALETTE.length]}"/><text x="14" y="9" font-size="11">${h(n)}</text></g>`,
    )
    .join('');
}

/** A line chart over categorical x with whiskers for each point's interval and vertical crossover marks. */
export function lineChart(c: LineChart): string {
  const rows = Math.ceil(c.series.length / 3);
  const height = H + rows * 14;
  const x0 = M.l;
  const x1 = W - M.r;
  const y0 = height - M.b - rows * 14;
  const y1 = M.t;
  const all = c.series.flatMap((s) => s.points.flatMap((p) => [p.y, p.hi ?? p.y]));
  const max = niceMax(Math.max(0, ...all.filter(Number.isFinite)));
  const n = Math.max(1, c.xs.length - 1);
  const xOf = (x: number) => (c.xs.length === 1 ? (x0 + x1) / 2 : x0 + 20 + ((x1 - x0 - 40) * x) / n);
  const yOf = (v: number) => y0 - ((y0 - y1) * v) / max;
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" class="chart line-chart" viewBox="0 0 ${W} ${height}" width="${W}" height="${height}" role="img" aria-label="${h(c.title)}">`;
  svg += `<text x="${W / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">${h(c.title)}</text>`;
  svg += yAxis(max, x0, x1, yOf);
  svg += `<line x1="${x0}" x2="${x1}" y1="${y0}" y2="${y0}" stroke="#333"/><line x1="${x0}" x2="${x0}" y1="${y0}" y2="${y1}" stroke="#333"/>`;
  c.xs.forEach((label, i) => {
    svg += `<text x="${xOf(i).toFixed(1)}" y="${y0 + 16}" text-anchor="middle" font-size="11">${h(label)}</text>`;
  });
  svg += `<text x="${(x0 + x1) / 2}" y="${y0 + 34}" text-anchor="middle" font-size="12">${h(c.xLabel)}</text>`;
  svg += `<text transform="translate(14,${(y0 + y1) / 2}) rotate(-90)" text-anchor="middle" font-size="12">${h(c.yLabel)}</text>`;
  for (const m of c.marks ?? []) {
    const x = xOf(m.x).toFixed(1);
    svg += `<g class="crossover" data-x="${m.x.toFixed(3)}"><line x1="${x}" x2="${x}" y1="${y0}" y2="${y1}" stroke="#555" stroke-dasharray="5 4"/><text x="${x}" y="${y1 - 4}" text-anchor="middle" font-size="11" fill="#555">${h(m.label)}</text></g>`;
  }
  c.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length];
    const pts = [...s.points].filter((p) => Number.isFinite(p.y)).sort((a, b) => a.x - b.x);
    svg += `<g class="series" data-series="${h(s.name)}" fill="${color}" stroke="${color}">`;
    if (pts.length > 1)
      svg += `<polyline fill="none" stroke-width="2" points="${pts.map((p) => `${xOf(p.x).toFixed(1)},${yOf(p.y).toFixed(1)}`).join(' ')}"/>`;
    for (const p of pts) {
      const x = xOf(p.x).toFixed(1);
      if (p.lo !== undefined && p.hi !== undefined && Number.isFinite(p.lo) && Number.isFinite(p.hi))
        svg += `<line class="ci" x1="${x}" x2="${x}" y1="${yOf(Math.max(0, p.lo)).toFixed(1)}" y2="${yOf(p.hi).toFixed(1)}" stroke-width="1.5"/>`;
      svg += `<circle class="point" cx="${x}" cy="${yOf(p.y).toFixed(1)}" r="3.5" data-x="${h(c.xs[p.x] ?? p.x)}" data-y="${p.y}"><title>${h(`${s.name}: ${tick(p.y)} at ${c.xs[p.x] ?? p.x}`)}</title></circle>`;
    }
    svg += '</g>';
  });
  svg += legend(
    c.series.map((s) => s.name),
    x0,
    y0 + 44,
  );
  return `${svg}</svg>`;
}

export interface BarGroup {
  name: string;
  bars: { name: string; value: number; lo?: number; hi?: number }[];
}

/** Horizontal bars, one group per measurement and one bar per run or dataplane, with interval whiskers. */
export function barChart(c: { title: string; unit: string; groups: BarGroup[]; series: string[] }): string {
  const barH = 12;
  const gap = 10;
  const labelW = 260;
  const x0 = labelW;
  const x1 = W - M.r - 40;
  const rows = Math.ceil(c.series.length / 3);
  let y = M.t + 10;
  const all = c.groups.flatMap((g) => g.bars.flatMap((b) => [b.value, b.hi ?? b.value]));
  const max = niceMax(Math.max(0, ...all.filter(Number.isFinite)));
  const xOf = (v: number) => x0 + ((x1 - x0) * Math.max(0, v)) / max;
  let body = '';
  for (const g of c.groups) {
    const gh = g.bars.length * barH;
    body += `<g class="bar-group" data-group="${h(g.name)}"><text x="${x0 - 8}" y="${(y + gh / 2).toFixed(1)}" text-anchor="end" dominant-baseline="middle" font-size="11">${h(g.name.length > 40 ? `${g.name.slice(0, 39)}…` : g.name)}</text>`;
    for (const b of g.bars) {
      const i = Math.max(0, c.series.indexOf(b.name));
      const color = PALETTE[i % PALETTE.length];
      if (Number.isFinite(b.value))
        body += `<rect class="bar" data-series="${h(b.name)}" data-value="${b.value}" x="${x0}" y="${y}" width="${(xOf(b.value) - x0).toFixed(1)}" height="${barH - 2}" fill="${color}"><title>${h(`${g.name} · ${b.name}: ${tick(b.value)} ${c.unit}`)}</title></rect>`;
      if (b.lo !== undefined && b.hi !== undefined && Number.isFinite(b.lo) && Number.isFinite(b.hi)) {
        const cy = (y + (barH - 2) / 2).toFixed(1);
        body += `<line class="ci" x1="${xOf(b.lo).toFixed(1)}" x2="${xOf(b.hi).toFixed(1)}" y1="${cy}" y2="${cy}" stroke="#222" stroke-width="1.5"/>`;
      }
      y += barH;
    }
    body += '</g>';
    y += gap;
  }
  const axisY = y;
  let axis = `<line x1="${x0}" x2="${x1}" y1="${axisY}" y2="${axisY}" stroke="#333"/>`;
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    axis += `<line class="grid" x1="${xOf(v).toFixed(1)}" x2="${xOf(v).toFixed(1)}" y1="${M.t}" y2="${axisY}" stroke="#eee"/><text x="${xOf(v).toFixed(1)}" y="${axisY + 14}" text-anchor="middle" font-size="11">${h(tick(v))}</text>`;
  }
  const height = axisY + 40 + rows * 14;
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" class="chart bar-chart" viewBox="0 0 ${W} ${height}" width="${W}" height="${height}" role="img" aria-label="${h(c.title)}">`;
  svg += `<text x="${W / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">${h(c.title)}</text>`;
  svg += axis + body;
  svg += `<text x="${(x0 + x1) / 2}" y="${axisY + 28}" text-anchor="middle" font-size="12">${h(c.unit)}</text>`;
  svg += legend(c.series, x0, axisY + 36);
  return `${svg}</svg>`;
}
