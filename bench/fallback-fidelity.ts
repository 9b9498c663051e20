/**
 * How far the built-in TypeScript fallback (tcp-rr) is from the native tools
 * on the same lab path in the same run: TCP_RR (netperf, sockperf, tcp-rr) and
 * TCP_CRR (netperf, tcp-rr in CRR mode), pod-to-pod, one round per
 * measurement, rounds interleaved tool by tool so drift hits every tool.
 * Prints each round's p50/p90/p99 (each tool's histogram) and transactions/s,
 * the ratios to netperf (and tcp-rr/sockperf), and per mode the median and
 * range of each ratio over the rounds; asserts nothing.
 * `npm run bench:fallback [-- --rounds N --duration S --modes rr,crr]`
 *
 * netperf must be on PATH (scripts/install-netperf.sh, run by scripts/setup.sh). The scenario's tool list
 * has no 'netperf' yet, so its rows ask for 'auto', which the plan resolves to
 * netperf where both lab nodes have it; the bench checks that it did.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { trapInterrupts } from '../core/interrupts.js';
import { createLogger } from '../core/log.js';
import { findOnPath } from '../core/process.js';
import { runInLab } from '../lab/index.js';
import type { ReportModel, ReportRow } from '../report/report.js';
import { writeFindings } from './findings.js';

type Mode = 'rr' | 'crr';
interface Contender {
  /** Column name and the tool the report must show. */
  name: string;
  tool: string;
}

const CONTENDERS: Record<Mode, Contender[]> = {
  rr: [
    { name: 'netperf', tool: 'auto' },
    { name: 'sockperf', tool: 'sockperf' },
    { name: 'tcp-rr', tool: 'tcp-rr' },
  ],
  crr: [
    { name: 'netperf', tool: 'auto' },
    { name: 'tcp-rr', tool: 'tcp-rr' },
  ],
};
/** Ratios printed: [numerator, denominator]. */
const RATIOS: Record<Mode, [string, string][]> = {
  rr: [
    ['tcp-rr', 'netperf'],
    ['sockperf', 'netperf'],
    ['tcp-rr', 'sockperf'],
  ],
  crr: [['tcp-rr', 'netperf']],
};
const METRICS = ['p50', 'p90', 'p99', 'tps'] as const;

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    modes: { type: 'string', default: 'rr,crr' },
  },
});
const rounds = Number(values.rounds);
const duration = Number(values.duration);
const modes = values.modes.split(',').filter((m): m is Mode => m === 'rr' || m === 'crr');
if (!(rounds >= 1) || !(duration >= 1) || modes.length === 0)
  throw new Error('usage: --rounds N>=1 --duration S>=1 --modes rr,crr');
for (const binary of ['netperf', 'netserver']) {
  if (!(await findOnPath(binary)))
    throw new Error(`${binary} is not on PATH: install it with scripts/install-netperf.sh (scripts/setup.sh runs it)`);
}

const rowId = (mode: Mode, name: string, round: number): string => `${mode}-${name}-${round}`;
const measurements = Array.from({ length: rounds }, (_, i) =>
  modes.flatMap((mode) =>
    CONTENDERS[mode].map((c) => ({
      id: rowId(mode, c.name, i),
      kind: 'rr',
      path: 'pod-to-pod',
      mode,
      tool: c.tool,
      rounds: 1,
    })),
  ),
).flat();

function metric(r: ReportRow | undefined, name: string): number {
  return r?.metrics.find((m) => m.name === name)?.value ?? NaN;
}

function median(xs: number[]): number {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Every row ran with the tool its column names, or the bench says which did not. */
function checkTools(report: ReportModel): void {
  for (const row of report.rows) {
    const want = row.id.split('-').slice(1, -1).join('-');
    if (row.status !== 'succeeded') throw new Error(`${row.id}: ${row.status}: ${row.error}`);
    if (row.tool !== want)
      throw new Error(`${row.id} ran ${row.tool}, not ${want} (is netperf on both lab nodes' PATH?)`);
  }
}

function roundTable(report: ReportModel, mode: Mode): string[] {
  const names = CONTENDERS[mode].map((c) => c.name);
  const ratios = RATIOS[mode];
  const lines = [
    `| round | metric | ${names.join(' | ')} | ${ratios.map(([a, b]) => `${a} / ${b}`).join(' | ')} | warnings |`,
    `|---|---|${names.map(() => '---:').join('|')}|${ratios.map(() => '---:').join('|')}|---|`,
  ];
  for (let i = 0; i < rounds; i++) {
    const rows = Object.fromEntries(names.map((n) => [n, report.rows.find((r) => r.id === rowId(mode, n, i))]));
    const warned = names
      .filter((n) => (rows[n]?.warnings.length ?? 0) > 0)
      .map((n) => `${n}: ${rows[n]!.warnings.map((w) => w.code).join(',')}`);
    for (const m of METRICS) {
      const v = names.map((n) => metric(rows[n], m).toFixed(1));
      const q = ratios.map(([a, b]) => (metric(rows[a], m) / metric(rows[b], m)).toFixed(2));
      lines.push(
        `| ${i + 1} | ${m}${m === 'tps' ? ' (trans/s)' : ' (µs)'} | ${v.join(' | ')} | ${q.join(' | ')} | ${m === 'p50' ? warned.join('; ') : ''} |`,
      );
    }
  }
  return lines;
}

function summary(report: ReportModel, mode: Mode): string[] {
  const lines = ['| ratio | metric | median | min | max |', '|---|---|---:|---:|---:|'];
  for (const [a, b] of RATIOS[mode]) {
    for (const m of METRICS) {
      const qs = Array.from(
        { length: rounds },
        (_, i) =>
          metric(
            report.rows.find((r) => r.id === rowId(mode, a, i)),
            m,
          ) /
          metric(
            report.rows.find((r) => r.id === rowId(mode, b, i)),
            m,
          ),
      );
      lines.push(
        `| ${a} / ${b} | ${m} | ${median(qs).toFixed(2)} | ${Math.min(...qs).toFixed(2)} | ${Math.max(...qs).toFixed(2)} |`,
      );
    }
  }
  return lines;
}

const log = createLogger({ component: 'bench' }, 'warn');
const tmp = mkdtempSync(join(tmpdir(), 'cnib-bench-'));
const interrupts = trapInterrupts(log);
try {
  const report = await runInLab(
    {
      nodes: 2,
      proxy: { mode: 'iptables', iptablesBackend: 'legacy' },
      dbPath: join(tmp, 'bench.db'),
      agentWaitMs: 30_000,
    },
    { name: 'fallback fidelity', durationSeconds: duration, warmupSeconds: 1, measurements },
    log,
    interrupts.signal,
  );
  if (!report) throw new Error('interrupted');
  checkTools(report);
  const versions = [...new Set(report.rows.map((r) => `${r.tool} ${r.toolVersion}`.trim()))].join(', ');
  const out = [`${rounds} rounds of ${duration} s, pod-to-pod, interleaved; ${versions}`];
  for (const mode of modes) {
    out.push(
      '',
      `## ${mode === 'rr' ? 'TCP_RR' : 'TCP_CRR'}`,
      '',
      ...roundTable(report, mode),
      '',
      ...summary(report, mode),
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
  await writeFindings({
    bench: 'fallback',
    title: 'Fallback tools against the native ones (TCP_RR, TCP_CRR)',
    body: out.join('\n'),
  });
} finally {
  interrupts.dispose();
  rmSync(tmp, { recursive: true, force: true });
}
