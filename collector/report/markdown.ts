/** Renders a report model as the Markdown table the CLI prints. */
import type { ReportModel, ReportRow } from './report.js';

function fmt(v: number | null, unit: string): string {
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
  ];
  return `${lines.join('\n')}\n`;
}
