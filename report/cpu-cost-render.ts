/** The "CPU per unit of work" section of a Markdown report (report/cpu-cost.ts). */
import { type CpuSeconds, kernelCpu } from './cpu-cost.js';
import { mdText } from './escape.js';
import type { ReportRow } from './report-row.js';

const m = (cores: number): string => `${Math.round(cores * 1000)}`;

function side(c: CpuSeconds): string {
  return `${m(c.system)} / ${m(c.softirq + c.irq)} / ${m(c.unsampled)} / ${m(c.dataplaneUser)} / ${m(c.agent)}`;
}

function perUnit(r: ReportRow): { value: string; ci: string } | undefined {
  const x = r.metrics.find((q) => q.name === 'cpu-per-gbit' || q.name === 'cpu-per-1k');
  if (!x) return undefined;
  const digits = x.value !== 0 && Math.abs(x.value) < 0.01 ? 4 : 3;
  const ci = x.summary?.ci95 ? `[${x.summary.ci95.map((v) => v.toFixed(digits)).join(', ')}] n=${x.summary.n}` : '—';
  return { value: `${x.value.toFixed(digits)} ${x.unit}`, ci };
}

export function renderCpuCost(rows: readonly ReportRow[]): string[] {
  const shown = rows.filter((r) => r.cpu || r.cpuMissing);
  if (!shown.length) return [];
  const lines = [
    '## CPU per unit of work',
    '',
    '| measurement | CPU per unit (median of rounds) | 95% CI of the mean | client: system / softirq+irq / between ticks / dataplane user / agent (mcores) | server: same | idle baseline client / server (mcores, kernel) |',
    '|---|---:|---|---|---|---|',
  ];
  for (const r of shown) {
    const u = perUnit(r);
    if (!r.cpu || !u) {
      lines.push(`| ${mdText(r.measurement)} | — | — | ${mdText(r.cpuMissing ?? 'no figure')} | | |`);
      continue;
    }
    const b = r.cpu.baseline;
    lines.push(
      `| ${mdText(r.measurement)} | ${u.value} | ${u.ci} | ${side(r.cpu.client)} (CPUs ${r.cpu.clientCpus.join(',')}) | ${side(r.cpu.server)} (CPUs ${r.cpu.serverCpus.join(',')}) | ${m(kernelCpu(b.client))} / ${m(kernelCpu(b.server))} |`,
    );
  }
  lines.push(
    '',
    "CPU per unit: the kernel's system, irq and softirq time and the busy time no tick sampled (between ticks: a CPU woken by a packet that sleeps again before the next tick) on the client's and the server's node (only their own CPUs) plus the dataplane processes' user time, minus the idle baseline measured before the run, per Gbit moved (equal to cores per Gbit/s) or per 1,000 requests or connections. Columns in millicores (net of the baseline, median of rounds). Softirq for a packet may run on the sending node's CPU (veth delivers on the sender's CPU), so the total of both nodes is the figure to compare, not either side alone. See docs/cpu-cost.md.",
    '',
  );
  return lines;
}
