/**
 * The shell every HTML report shares: one self-contained file (inline CSS, no
 * script, no URL fetched), a Content-Security-Policy that forbids any fetch,
 * and the small pieces the pages reuse (tables, the dataplane charts). Pure.
 */
import { htmlText as h } from './escape.js';
import type { ReportModel } from './report.js';
import { lineChart } from './svg-chart.js';

const CSS = `body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#222;padding:0 12px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}table{border-collapse:collapse;margin:8px 0;font-size:12px}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}td.n{text-align:right;font-variant-numeric:tabular-nums}
.warn{color:#a15c00}.bad{color:#b00020}.good{color:#11772d}.note{color:#555;font-size:12px}svg.chart{display:block;margin:10px 0;max-width:100%;height:auto}`;

/** A whole page: nothing in it can load anything (default-src 'none'; inline styles only). */
export function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${h(title)}</title><style>${CSS}</style></head>
<body>
${body}
<p class="note">Written by cni-bench. Charts: 95% confidence intervals of the mean of the rounds as whiskers; the value drawn is the report's headline (median of the rounds for rates).</p>
</body></html>
`;
}

export function table(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  numeric: readonly number[] = [],
): string {
  const th = head.map((c) => `<th>${h(c)}</th>`).join('');
  const tr = rows
    .map((r) => `<tr>${r.map((c, i) => `<td${numeric.includes(i) ? ' class="n"' : ''}>${c}</td>`).join('')}</tr>`)
    .join('\n');
  return `<table><thead><tr>${th}</tr></thead><tbody>\n${tr}\n</tbody></table>`;
}

export function num(v: number | null | undefined, digits = 4): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  return Math.abs(v) >= 1000
    ? Math.round(v).toLocaleString('en-US')
    : v.toLocaleString('en-US', { maximumSignificantDigits: digits });
}

/** Per process, the chart series of one run: CPU (mean millicores) and peak memory (MiB) per phase, the largest over nodes. */
function perPhase(model: ReportModel, pick: 'cpu' | 'rss'): Map<string, (number | null)[]> {
  const out = new Map<string, (number | null)[]>();
  model.rows.forEach((r, i) => {
    for (const node of r.dataplane) {
      for (const p of node.processes) {
        const v = pick === 'cpu' ? p.cpuMillicoresAvg : p.rssBytesMax / 1048576;
        if (v === null) continue;
        const key = `${node.node} ${p.name}`;
        const arr = out.get(key) ?? model.rows.map(() => null);
        arr[i] = Math.max(arr[i] ?? 0, v);
        out.set(key, arr);
      }
    }
  });
  return out;
}

/** The dataplane's CPU and memory per phase, several runs side by side (one series per run and process). */
export function dataplaneCharts(runs: readonly { label: string; model: ReportModel }[]): string {
  const first = runs[0]?.model;
  if (!first?.rows.length) return '';
  const xs = first.rows.map((_, i) => String(i + 1));
  const many = runs.length > 1;
  const chart = (pick: 'cpu' | 'rss', title: string, yLabel: string): string => {
    const series = runs.flatMap(({ label, model }) =>
      [...perPhase(model, pick)].map(([proc, values]) => ({
        name: many ? `${label}: ${proc}` : proc,
        points: values.flatMap((y, x) => (y === null || x >= xs.length ? [] : [{ x, y }])),
      })),
    );
    return series.length ? lineChart({ title, xLabel: 'phase (see the table)', yLabel, xs, series }) : '';
  };
  const cpu = chart('cpu', "Dataplane CPU per phase (mean over the phase's samples)", 'millicores');
  const mem = chart('rss', 'Dataplane memory per phase (peak RSS)', 'MiB');
  if (!cpu && !mem)
    return '<p class="note">No dataplane process samples (no kube-proxy or cilium-agent was sampled).</p>';
  const legend = table(
    ['phase', 'measurement'],
    first.rows.map((r, i) => [String(i + 1), h(r.measurement)]),
    [0],
  );
  return `<h2>Dataplane CPU and memory per phase</h2>${cpu}${mem}${legend}`;
}
