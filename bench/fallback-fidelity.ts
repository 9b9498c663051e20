/**
 * How far the built-in TypeScript fallback (tcp-rr) is from the native tool
 * (sockperf) on the same lab path in the same run: TCP_RR pod-to-pod, rounds
 * interleaved native/fallback so drift hits both. Prints both tools'
 * percentiles from merged histograms and the fallback/native ratios; asserts
 * nothing. `npm run bench:fallback [-- --rounds N --duration S]`
 */
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { runInLab, trapInterrupts } from '../cli/lab-session.js';
import { createLogger } from '../core/log.js';
import type { ReportRow } from '../collector/report/report.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' } } });
const rounds = Number(values.rounds);
const duration = Number(values.duration);
const log = createLogger({ component: 'bench' }, 'warn');
const tmp = mkdtempSync(join(tmpdir(), 'cnib-bench-'));
const interrupts = trapInterrupts(log);

const measurements = Array.from({ length: rounds }, (_, i) => [
  { id: `native-${i}`, kind: 'rr', path: 'pod-to-pod', tool: 'sockperf', rounds: 1 },
  { id: `fallback-${i}`, kind: 'rr', path: 'pod-to-pod', tool: 'tcp-rr', rounds: 1 },
]).flat();

try {
  const report = await runInLab(
    { nodes: 2, proxy: { mode: 'iptables', iptablesBackend: 'legacy' }, dbPath: join(tmp, 'bench.db'), agentWaitMs: 30_000 },
    { name: 'fallback fidelity', durationSeconds: duration, warmupSeconds: 1, measurements },
    log,
    interrupts.signal,
  );
  if (!report) throw new Error('interrupted');
  const metric = (r: ReportRow | undefined, name: string): number => r?.metrics.find((m) => m.name === name)?.value ?? NaN;
  const lines = ['| round | metric | sockperf (µs) | tcp-rr (µs) | tcp-rr / sockperf |', '|---|---|---:|---:|---:|'];
  for (let i = 0; i < rounds; i++) {
    const n = report.rows.find((r) => r.id === `native-${i}`);
    const f = report.rows.find((r) => r.id === `fallback-${i}`);
    for (const name of ['p50', 'p90', 'p99', 'tps']) {
      const a = metric(n, name);
      const b = metric(f, name);
      lines.push(`| ${i + 1} | ${name}${name === 'tps' ? ' (trans/s)' : ''} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(2)} |`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  interrupts.dispose();
  rmSync(tmp, { recursive: true, force: true });
}
