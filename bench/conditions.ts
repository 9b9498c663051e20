/**
 * What policy, Hubble, L7 policy and encryption cost, printed, never asserted:
 * per lab dataplane one run in one fresh lab, every measurement first without
 * any condition (the baseline) and then under each condition in turn, applied
 * and verified in the dataplane and reverted (collector/runs/condition-phases.ts),
 * so each condition stands beside its own baseline, measured by the same agents
 * right before its group is applied. Per row: baseline and value with their 95% intervals over the
 * rounds, the change and the Welch verdict (within noise or not); per step, how
 * it was verified and how long enforcement took; a condition this machine
 * cannot run shows its reason and no number. The 0-policies step of the sweep
 * is the drift control: the baseline's own dataplane measured again later.
 *
 *   npm run bench:conditions -- [--dataplanes cilium,iptables,nftables] [--rounds 5] [--duration 3]
 *                               [--steps 0,100,500] [--measurements rr,crr,tput]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { trapInterrupts } from '../core/interrupts.js';
import { createLogger } from '../core/log.js';
import { type LabProxyOptions, runInLab } from '../lab/index.js';
import type { ReportModel } from '../report/report.js';
import { writeFindings } from './findings.js';

const MEASUREMENTS: Record<string, Record<string, unknown>> = {
  rr: { id: 'rr', kind: 'rr', path: 'pod-to-pod', mode: 'rr' },
  crr: { id: 'crr', kind: 'rr', path: 'pod-to-pod', mode: 'crr' },
  tput: { id: 'tput', kind: 'throughput', path: 'pod-to-pod', streams: 1 },
  http: { id: 'http', kind: 'http', path: 'pod-to-pod' },
};
const DATAPLANES = ['cilium', 'iptables', 'nftables'];

const { values } = parseArgs({
  options: {
    dataplanes: { type: 'string', default: 'cilium,iptables' },
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '3' },
    steps: { type: 'string', default: '0,100,500' },
    measurements: { type: 'string', default: 'rr,crr' },
  },
});
const list = (s: string | undefined): string[] => (s ?? '').split(',').filter(Boolean);
const dataplanes = list(values.dataplanes);
for (const d of dataplanes)
  if (!DATAPLANES.includes(d)) throw new Error(`--dataplanes: '${d}' is not one of ${DATAPLANES.join(', ')}`);
const measurements = list(values.measurements).map((m) => {
  const spec = MEASUREMENTS[m];
  if (!spec) throw new Error(`--measurements: '${m}' is not one of ${Object.keys(MEASUREMENTS).join(', ')}`);
  return spec;
});
const steps = list(values.steps).map(Number);
if (steps.some((n) => !Number.isInteger(n) || n < 0))
  throw new Error('--steps: whole numbers of policies, e.g. 0,100,500');

function scenario(d: string): Record<string, unknown> {
  const policy = { networkPolicy: {}, policyCount: { steps } };
  return {
    name: `conditions ${d}`,
    durationSeconds: Number(values.duration),
    warmupSeconds: 1,
    rounds: Number(values.rounds),
    roundSleepSeconds: 0,
    measurements,
    // On Cilium every condition is asked for; what cannot run here says why. kube-proxy labs have policy only.
    conditions: d === 'cilium' ? { ...policy, hubble: {}, l7Policy: {}, encryption: {} } : policy,
  };
}

const fmt = (v: number | null): string =>
  v === null ? '—' : Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(3);
const ci = (c: [number, number] | null): string => (c ? `${fmt(c[0])} … ${fmt(c[1])}` : '—');
const cell = (s: string): string => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

const rows = [
  '| dataplane | condition | measurement | baseline (95% CI) | under condition (95% CI) | change | verdict | conntrack peak / dataplane CPU, baseline → condition | load |',
  '|---|---|---|---|---|---:|---|---|---:|',
];
const stepLines = ['| dataplane | step | status | enforcement | how verified (or why not) |', '|---|---|---|---:|---|'];
const walls: string[] = [];

/**
 * Drift suspects of a row's phase: the highest conntrack count any node
 * reached (entries left by earlier phases) and the dataplane processes' mean
 * CPU summed over the nodes (an enforcer still busy after a change).
 */
function phaseState(r: ReportModel, measurement: string): string {
  const row = r.rows.find((x) => x.measurement === measurement);
  const nodes = row?.dataplane ?? [];
  if (!nodes.length) return '—';
  const ct = Math.max(...nodes.map((n) => n.conntrackPeak)).toLocaleString('en-US');
  const cpu = nodes.flatMap((n) => n.processes).reduce((a, p) => a + (p.cpuMillicoresAvg ?? 0), 0);
  return `${ct} / ${cpu.toFixed(0)} m`;
}

function collect(d: string, r: ReportModel, load: string): void {
  for (const s of r.conditions?.steps ?? [])
    stepLines.push(
      `| ${d} | ${s.action} ${cell(s.condition)} | ${s.status} | ${s.enforcementMs === null ? '—' : `${s.enforcementMs} ms`} | ${cell(s.how.slice(0, 400))} |`,
    );
  for (const c of r.conditions?.rows ?? []) {
    const under = c.error ? `— (${cell(c.error.slice(0, 200))})` : `${fmt(c.value)} (${ci(c.valueCi95)})`;
    const change = c.change === null ? '—' : `${c.change >= 0 ? '+' : ''}${(c.change * 100).toFixed(1)}%`;
    const label =
      c.group === 'policyCount' && c.condition === '0 policies' ? '0 policies (drift control)' : c.condition;
    rows.push(
      `| ${d} | ${cell(label)} | ${cell(c.measurement)} | ${fmt(c.baseline)} ${c.unit} (${ci(c.baselineCi95)}) | ${under} | ${change} | ${c.verdict ?? '—'} | ${phaseState(r, c.baselineFrom === 'adjacent' ? `${c.measurement} [baseline before ${c.group}]` : c.measurement)} → ${phaseState(r, `${c.measurement} [${c.condition}]`)} | ${load} |`,
    );
    process.stdout.write(`${rows.at(-1)}\n`);
  }
}

const log = createLogger({ component: 'bench' }, 'warn');
const interrupts = trapInterrupts(log);
const tmp = mkdtempSync(join(tmpdir(), 'cnib-bench-conditions-'));
const began = Date.now();
try {
  for (const d of dataplanes) {
    if (interrupts.signal.aborted) break;
    const proxy = (d === 'iptables' ? { mode: d, iptablesBackend: 'legacy' } : { mode: d }) as LabProxyOptions;
    const t0 = Date.now();
    const loadBefore = loadavg()[0]?.toFixed(1) ?? '?';
    const report = await runInLab(
      { nodes: 2, proxy, policyEnforcer: d !== 'cilium', dbPath: join(tmp, `${d}.db`), agentWaitMs: 120_000 },
      scenario(d),
      log,
      interrupts.signal,
    );
    const load = `${loadBefore}–${loadavg()[0]?.toFixed(1) ?? '?'}`;
    walls.push(
      `${d}: ${((Date.now() - t0) / 1000).toFixed(0)} s (run ${report?.run.state ?? 'not started'}${report?.run.reason ? `: ${report.run.reason}` : ''})`,
    );
    if (report) collect(d, report, load);
  }
} finally {
  interrupts.dispose();
  rmSync(tmp, { recursive: true, force: true });
}
const wall = `wall time ${((Date.now() - began) / 1000).toFixed(0)} s (${walls.join('; ')})`;
const body = [
  `Overhead conditions per lab dataplane: ${measurements.map((m) => m.id).join(', ')}, ${values.rounds} rounds of ${values.duration} s, one fresh 2-node lab per dataplane, every condition measured beside its own baseline (taken right before it in the same run), applied, verified in the dataplane, left to settle, measured and reverted. The drift control (0 policies) must read within noise. Load is the 1-minute load average before–after each lab.`,
  '',
  ...rows,
  '',
  ...stepLines,
  '',
  wall,
].join('\n');
process.stdout.write(`\n${body}\n`);
await writeFindings({ bench: 'conditions', title: 'What policy, Hubble, L7 policy and encryption cost', body });
