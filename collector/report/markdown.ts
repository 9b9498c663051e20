/** Renders a report model as the Markdown the CLI prints. */
import type { ReportModel, ReportRow } from './report.js';
import type { SweepComparison, SweepTable } from './sweep.js';

export function fmt(v: number | null, unit: string): string {
  if (v === null) return '—';
  if (unit === 'Gbit/s') return v.toFixed(2);
  return v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1);
}

function notes(r: ReportRow): string {
  const out: string[] = [];
  const d = r.details;
  if (typeof d.retransmits === 'number') out.push(`retrans ${d.retransmits}`);
  if (typeof d.p50Us === 'number') out.push(`p50 ${(d.p50Us / 1000).toFixed(2)} ms`);
  if (typeof d.p99Us === 'number') out.push(`p99 ${(d.p99Us / 1000).toFixed(2)} ms`);
  if (typeof d.non2xx === 'number' && d.non2xx > 0) out.push(`non-2xx ${d.non2xx}`);
  if (typeof d.socketErrors === 'number' && d.socketErrors > 0) out.push(`socket errors ${d.socketErrors}`);
  if (r.dnatConnections !== null) out.push(`DNAT +${r.dnatConnections}`);
  out.push(...r.warnings.map((w) => `⚠ ${w}`));
  if (r.error) out.push(`error: ${r.error}`);
  return out.join('; ');
}

export function renderMarkdown(report: ReportModel): string {
  const { run } = report;
  const secs = run.endedMs && run.startedMs ? ((run.endedMs - run.startedMs) / 1000).toFixed(1) : '?';
  const lines = [
    `# cni-bench report: ${run.name} (${run.id})`,
    '',
    `State: **${run.state}**${run.reason ? ` (${run.reason})` : ''}; wall time ${secs} s.`,
    '',
    '| measurement | path | tool | value | unit | status | notes |',
    '|---|---|---|---:|---|---|---|',
    ...report.rows.map(
      (r) => `| ${r.measurement} | ${r.path} | ${r.tool}${r.toolVersion ? ` ${r.toolVersion}` : ''} | ${fmt(r.value, r.unit)} | ${r.unit} | ${r.status} | ${notes(r).replaceAll('|', '\\|')} |`,
    ),
    '',
    'DNAT +N: new connections that kube-proxy KUBE-SEP rules translated on the client node during the phase (warm-up included).',
    ...(report.sweep ? ['', ...renderSweep(report.sweep)] : []),
    '',
    ...renderDataplane(report.rows),
  ];
  return `${lines.join('\n')}\n`;
}

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(0)} MiB`;
}

/** Each node's dataplane per phase: conntrack, rule and map sizes, dataplane processes. */
export function renderDataplane(rows: readonly ReportRow[]): string[] {
  const lines = ['## Dataplane per phase', '', '| phase | node | samples | conntrack peak / max | iptables rules | KUBE-SERVICES | service-ips | processes (CPU avg/max, RSS max) |', '|---|---|---:|---:|---:|---:|---:|---|'];
  for (const r of rows) {
    for (const n of r.dataplane) {
      const procs = n.processes.map((p) => `${p.name} ${p.cpuMillicoresAvg === null ? '—' : Math.round(p.cpuMillicoresAvg)}/${p.cpuMillicoresMax === null ? '—' : Math.round(p.cpuMillicoresMax)} m, ${mib(p.rssBytesMax)}`);
      const cells = [
        r.measurement,
        n.node,
        String(n.samples),
        `${n.conntrackPeak.toLocaleString('en-US')} / ${n.conntrackMax.toLocaleString('en-US')}`,
        n.iptablesRules.toLocaleString('en-US'),
        n.kubeServicesRules.toLocaleString('en-US'),
        n.nftServiceIps === null ? '—' : n.nftServiceIps.toLocaleString('en-US'),
        [...procs, ...n.errors.map((e) => `⚠ ${e}`)].join('; ').replaceAll('|', '\\|') || 'none running',
      ];
      lines.push(`| ${cells.join(' | ')} |`);
    }
  }
  return lines.length > 4 ? lines : [];
}

export function pct(change: number | null): string {
  if (change === null) return '';
  const p = Math.round(change * 100);
  return p === 0 ? ' (±0%)' : ` (${p > 0 ? '+' : ''}${p}%)`;
}

function secs(ms: number | null): string {
  return ms === null ? '—' : (ms / 1000).toFixed(1);
}

/** The sweep laid out like the reference study: one row per step, one column per measurement, change against the first step. */
export function renderSweep(sweep: SweepTable): string[] {
  const count = (n: number | null): string => (n === null ? '—' : n.toLocaleString('en-US'));
  // Only the counters of the mode in use: iptables mode has no service-ips map, nftables mode no KUBE-SERVICES rules.
  const counters = [
    ...(sweep.steps.some((st) => (st.kubeServicesRules ?? 0) > 0) ? [{ head: 'KUBE-SERVICES rules', cell: (st: SweepTable['steps'][number]) => count(st.kubeServicesRules) }] : []),
    ...(sweep.steps.some((st) => st.nftServiceIps !== null) ? [{ head: 'service-ips elements', cell: (st: SweepTable['steps'][number]) => count(st.nftServiceIps) }] : []),
  ];
  const head = ['dummy Services', ...sweep.series.map((s) => `${s.label} (${s.unit})`), 'programming s', 'sync s (last sample s)', ...counters.map((c) => c.head)];
  return [
    '## Service scale sweep',
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---:').join('|')}|`,
    ...sweep.steps.map((st, i) => {
      const cells = [
        st.services.toLocaleString('en-US'),
        ...sweep.series.map((s) => `${fmt(s.values[i] ?? null, s.unit)}${i > 0 ? pct(s.change[i] ?? null) : ''}`),
        secs(st.programmingMs),
        `${secs(st.syncMs)}${st.pollMs !== null ? ` (${secs(st.pollMs)})` : ''}`,
        ...counters.map((c) => c.cell(st)),
      ];
      return `| ${cells.join(' | ')} |${st.status !== 'succeeded' ? ` ${st.status}` : ''}`;
    }),
    '',
    "Change in parentheses: against the first step. Programming: wall time of the batches that wrote the step into every node. Sync: from the end of programming until every node's sampled dataplane showed the step, including the last round of samples (its duration in parentheses); counters are the fewest of all nodes.",
  ];
}

/** Several sweeps (one per proxy mode) side by side, like the study's table, with where one mode overtakes another. */
export function renderSweepComparison(c: SweepComparison): string {
  const lines: string[] = ['# Service scale sweep: ' + c.runs.join(' vs '), ''];
  for (const s of c.series) {
    const head = ['dummy Services ahead of the target', ...c.runs];
    lines.push(`## ${s.label} (${s.unit})`, '', `| ${head.join(' | ')} |`, `|${head.map(() => '---:').join('|')}|`);
    c.steps.forEach((n, i) => {
      const cells = s.byRun.map((r) => `${fmt(r.values[i] ?? null, s.unit)}${i > 0 ? pct(r.change[i] ?? null) : ''}`);
      lines.push(`| ${n.toLocaleString('en-US')} | ${cells.join(' | ')} |`);
    });
    lines.push('', ...s.crossovers.map((x) => `- ${x.text}.`), '');
  }
  lines.push('One round per step: a difference under 10% between modes counts as a tie, and changes of that size against the first step are within noise on a shared machine.');
  return `${lines.join('\n')}\n`;
}
