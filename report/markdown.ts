/** Renders a report model as the Markdown the CLI prints. */
import { BUILTIN_TOOLS } from '../core/tools.js';
import { renderConditions } from './conditions-render.js';
import { renderCpuCost } from './cpu-cost-render.js';
import { renderDisruptions } from './disruption-render.js';
import { mdText } from './escape.js';
import { renderPathMtu } from './path-mtu-render.js';
import type { ReportModel, ReportRow } from './report.js';
import type { SweepComparison, SweepTable } from './sweep.js';
import { latencyNote, renderLatencyComparison, stepLatency } from './sweep-latency.js';

export function fmt(v: number | null, unit: string): string {
  if (v === null) return '—';
  if (unit === 'Gbit/s') return v.toFixed(2);
  if (unit === 'errors after event') return v.toLocaleString('en-US');
  return v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1);
}

function notes(r: ReportRow): string {
  const out: string[] = [];
  const d = r.details;
  if (typeof d.retransmits === 'number') out.push(`retrans ${d.retransmits}`);
  // Latency percentiles that are not the headline (merged over rounds).
  for (const m of r.metrics.slice(1))
    if (m.name.startsWith('p') || m.name === 'loss' || m.name === 'jitter')
      out.push(`${m.name} ${fmtUnit(m.value, m.unit)}`);
  if (typeof d.non2xx === 'number' && d.non2xx > 0) out.push(`non-2xx ${d.non2xx}`);
  if (typeof d.socketErrors === 'number' && d.socketErrors > 0) out.push(`socket errors ${d.socketErrors}`);
  if (r.dnatConnections !== null) out.push(`DNAT +${r.dnatConnections}`);
  if (r.socketLbTranslated !== null) out.push(`Cilium socket-LB +${r.socketLbTranslated}`);
  out.push(...r.warnings.map((w) => `⚠ ${w.code}: ${w.message}`));
  if (r.invalid)
    out.push(
      `counters over the first such round: ${Object.entries(r.invalid.counters)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
  if (r.error) out.push(`error: ${r.error}`);
  return out.join('; ');
}

function fmtUnit(v: number, unit: string): string {
  if (unit === 'ms') return `${v.toFixed(v < 10 ? 2 : 1)} ms`;
  if (unit === 'us') return `${Math.round(v)} µs`;
  if (unit === '%') return `${v.toFixed(2)}%`;
  return `${fmt(v, unit)} ${unit}`;
}

/** "±3.1% (n=3, CV 2.0%)": the 95% interval of the mean, relative to the headline, and the spread. */
export function dispersion(r: ReportRow): string {
  const s = r.metrics[0]?.summary;
  if (!s) return '—';
  if (!s.ci95) return `n=${s.n}`;
  const half = (s.ci95[1] - s.ci95[0]) / 2;
  const rel = s.mean !== 0 ? (100 * half) / Math.abs(s.mean) : 0;
  return `±${rel.toFixed(1)}% (n=${s.n}, CV ${(100 * s.cv).toFixed(1)}%)`;
}

export function renderMarkdown(report: ReportModel): string {
  const { run } = report;
  const secs = run.endedMs && run.startedMs ? ((run.endedMs - run.startedMs) / 1000).toFixed(1) : '?';
  const lines = [
    `# cni-bench report: ${mdText(run.name)} (${mdText(run.id)})`,
    '',
    `State: **${mdText(run.state)}**${run.reason ? ` (${mdText(run.reason)})` : ''}; wall time ${secs} s.`,
    '',
    `Cluster: ${describeLine(report)}.`,
    ...clusterNotes(report),
    '',
    '| measurement | path | tool | value | unit | 95% CI | status | notes |',
    '|---|---|---|---:|---|---|---|---|',
    ...report.rows.map(
      (r) =>
        `| ${mdText(r.measurement)} | ${mdText(r.path)} | ${mdText(r.tool)}${r.toolVersion ? ` ${mdText(r.toolVersion)}` : ''}${BUILTIN_TOOLS.has(r.tool) ? ' (built-in)' : ''} | ${r.invalid ? `**invalid** (${mdText(r.invalid.code)})` : r.value === null ? '—' : `${r.warnings.length ? '⚠ ' : ''}${fmt(r.value, r.unit)}`} | ${mdText(r.unit)} | ${dispersion(r)} | ${mdText(r.status)} | ${mdText(notes(r))} |`,
    ),
    '',
    'value: the median of the rounds for rates; latency percentiles from the histograms of all rounds merged. 95% CI: half-width of the confidence interval of the mean, relative. ⚠: a methodology guard fired (see notes). **invalid**: the kernel counted connections refused or retried during the rounds, so the number measured the retries, not the dataplane, and is not shown.',
    "(built-in): measured by cni-bench's own client where no native tool is installed on both ends (or none can run the measurement); not comparable with a native tool's numbers.",
    'DNAT +N: new connections that kube-proxy KUBE-SEP rules translated on the client node during the phase (warm-up included).',
    ...(report.rows.some((r) => r.socketLbTranslated !== null)
      ? [
          "Cilium socket-LB +N: sockets on the client node whose connect() Cilium's socket LB translated from a Service address to a backend and that were closed during the phase (its cilium_metrics count of reason LB_REVNAT_DELETE; warm-up included).",
        ]
      : []),
    ...skippedLines(report),
    ...(report.sweep ? ['', ...renderSweep(report.sweep)] : []),
    ...(report.conditions ? ['', ...renderConditions(report.conditions)] : []),
    ...(report.disruptions ? ['', ...renderDisruptions(report.disruptions)] : []),
    '',
    ...renderCpuCost(report.rows),
    ...renderPathMtu(report.rows),
    ...renderDataplane(report.rows),
    ...renderBpfMemory(report.rows),
  ];
  return `${lines.join('\n')}\n`;
}

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(0)} MiB`;
}

/** Each node's dataplane per phase: conntrack, rule and map sizes, dataplane processes. */
export function renderDataplane(rows: readonly ReportRow[]): string[] {
  const lines = [
    '## Dataplane per phase',
    '',
    '| phase | node | samples | conntrack peak / max | iptables rules | KUBE-SERVICES | service-ips | processes (CPU avg/max, RSS max) |',
    '|---|---|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    for (const n of r.dataplane) {
      const procs = n.processes.map(
        (p) =>
          `${p.name} ${p.cpuMillicoresAvg === null ? '—' : Math.round(p.cpuMillicoresAvg)}/${p.cpuMillicoresMax === null ? '—' : Math.round(p.cpuMillicoresMax)} m, ${mib(p.rssBytesMax)}`,
      );
      const cells = [
        mdText(r.measurement),
        mdText(n.node),
        String(n.samples),
        `${n.conntrackPeak.toLocaleString('en-US')} / ${n.conntrackMax.toLocaleString('en-US')}`,
        n.iptablesRules.toLocaleString('en-US'),
        n.kubeServicesRules.toLocaleString('en-US'),
        n.nftServiceIps === null ? '—' : n.nftServiceIps.toLocaleString('en-US'),
        mdText([...procs, ...n.errors.map((e) => `⚠ ${e}`)].join('; ')) || 'none running',
      ];
      lines.push(`| ${cells.join(' | ')} |`);
    }
  }
  return lines.length > 4 ? lines : [];
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** BPF map memory per phase and node, with the largest maps (the study's "BPF map memory" figure is the total). */
export function renderBpfMemory(rows: readonly ReportRow[]): string[] {
  const lines = [
    '## BPF map memory per phase',
    '',
    '| phase | node | maps | memory (memlock) | Cilium LB frontends (with backends / all) | largest maps |',
    '|---|---|---:|---:|---:|---|',
  ];
  const kernelWide = rows.some((r) => r.dataplane.some((n) => n.bpf?.scope === 'kernel'));
  for (const r of rows) {
    for (const n of r.dataplane) {
      if (!n.bpf) continue;
      const b = n.bpf;
      const top = b.top
        .slice(0, 5)
        .map((m) => `${m.name} ${mb(m.bytesMemlock)}`)
        .join(', ');
      const lb = b.lbFrontends
        ? `${b.lbFrontends.programmed.toLocaleString('en-US')} / ${b.lbFrontends.total.toLocaleString('en-US')}`
        : '—';
      lines.push(
        `| ${r.measurement} | ${n.node} | ${b.maps.toLocaleString('en-US')}${b.scope === 'kernel' ? ' (kernel)' : ''} | ${mb(b.bytesMemlock)} | ${lb} | ${top || '—'} |`,
      );
    }
  }
  if (lines.length === 4) return [];
  return [
    '',
    ...lines,
    '',
    `Memory is the kernel's bytes_memlock at the end of the phase: on a Cilium node, of the maps pinned in that node's bpffs (MB = 10^6 bytes)${kernelWide ? '; "(kernel)": every BPF map on the machine, which all nodes of a lab share' : ''}.`,
  ];
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
    ...(sweep.steps.some((st) => (st.kubeServicesRules ?? 0) > 0)
      ? [{ head: 'KUBE-SERVICES rules', cell: (st: SweepTable['steps'][number]) => count(st.kubeServicesRules) }]
      : []),
    ...(sweep.steps.some((st) => st.nftServiceIps !== null)
      ? [{ head: 'service-ips elements', cell: (st: SweepTable['steps'][number]) => count(st.nftServiceIps) }]
      : []),
    ...(sweep.steps.some((st) => st.ciliumFrontends !== null)
      ? [{ head: 'Cilium LB frontends', cell: (st: SweepTable['steps'][number]) => count(st.ciliumFrontends) }]
      : []),
  ];
  const head = [
    'dummy Services',
    ...sweep.series.map((s) => `${s.label} (${s.unit})`),
    'programming s',
    'sync s (last sample s)',
    'programming latency',
    ...counters.map((c) => c.head),
  ];
  return [
    '## Service scale sweep',
    '',
    `| ${head.map(mdText).join(' | ')} |`,
    `|${head.map(() => '---:').join('|')}|`,
    ...sweep.steps.map((st, i) => {
      const cells = [
        st.services.toLocaleString('en-US'),
        ...sweep.series.map((s) => `${fmt(s.values[i] ?? null, s.unit)}${i > 0 ? pct(s.change[i] ?? null) : ''}`),
        secs(st.programmingMs),
        `${secs(st.syncMs)}${st.pollMs !== null ? ` (${secs(st.pollMs)})` : ''}`,
        stepLatency(st),
        ...counters.map((c) => c.cell(st)),
      ];
      return `| ${cells.join(' | ')} |${st.status !== 'succeeded' ? ` ${st.status}` : ''}`;
    }),
    '',
    "Change in parentheses: against the first step. Programming: wall time of the batches that wrote the step into every node. Sync: from the end of programming until every node's sampled dataplane showed the step, including the last round of samples (its duration in parentheses); counters are the fewest of all nodes.",
    ...(sweep.steps.some((st) => st.programmingLatencyMs !== null)
      ? ['', latencyNote(sweep.steps.find((st) => st.pollPauseMs !== null)?.pollPauseMs ?? null)]
      : []),
  ];
}

/** Several sweeps (one per proxy mode) side by side, like the study's table, with where one mode overtakes another. */
export function renderSweepComparison(c: SweepComparison): string {
  const lines: string[] = [`# Service scale sweep: ${c.runs.join(' vs ')}`, ''];
  for (const s of c.series) {
    const head = ['dummy Services ahead of the target', ...c.runs];
    lines.push(
      `## ${mdText(s.label)} (${mdText(s.unit)})`,
      '',
      `| ${head.map(mdText).join(' | ')} |`,
      `|${head.map(() => '---:').join('|')}|`,
    );
    c.steps.forEach((n, i) => {
      const cells = s.byRun.map((r) => `${fmt(r.values[i] ?? null, s.unit)}${i > 0 ? pct(r.change[i] ?? null) : ''}`);
      lines.push(`| ${n.toLocaleString('en-US')} | ${cells.join(' | ')} |`);
    });
    lines.push('', ...s.crossovers.map((x) => `- ${mdText(x.text)}.`), '');
  }
  lines.push(...renderLatencyComparison(c));
  const rounds = c.series
    .flatMap((s) => s.byRun.flatMap((r) => r.rounds.map((x) => x?.length ?? 0)))
    .filter((n) => n > 0);
  const n = rounds.length
    ? `${Math.min(...rounds)}${Math.max(...rounds) !== Math.min(...rounds) ? `-${Math.max(...rounds)}` : ''}`
    : '0';
  lines.push(
    `${n} round${n === '1' ? '' : 's'} per step; values are the medians of the rounds. One mode is ahead of another at a step only when their rounds differ significantly (Welch's t-test p < 0.05, disjoint 95% confidence intervals, and more than 3%; with one round, more than 15%); otherwise they are a tie. The changes against the first step are medians and carry no such test.`,
  );
  return `${lines.join('\n')}\n`;
}

function describeLine(report: ReportModel): string {
  const d = report.cluster.description;
  const os = [d.osImage, d.containerRuntime].filter(Boolean).join(', ');
  return mdText(
    `Kubernetes ${d.kubernetesVersion}; CNI ${d.cni}${d.cniMode ? ` (${d.cniMode})` : ''}; kube-proxy ${d.kubeProxyMode}; kernel ${d.kernel}; nodes ${d.nodeType}${os ? `; ${os}` : ''}${d.hardware ? `; hardware ${d.hardware}` : ''}`,
  );
}

/** What the description could not read or found in disagreement, under the Cluster line. */
function clusterNotes(report: ReportModel): string[] {
  const notes = report.cluster.description.notes ?? [];
  return notes.length ? ['', ...notes.map((n) => `- ${mdText(n)}`)] : [];
}

function skippedLines(report: ReportModel): string[] {
  const skipped = (report.cluster.skipped ?? []) as { id: string; reason: string }[];
  return skipped.length
    ? [
        '',
        'Skipped (default measurements these nodes cannot run):',
        ...skipped.map((s) => `- ${mdText(s.id)}: ${mdText(s.reason)}`),
      ]
    : [];
}
