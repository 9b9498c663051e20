/**
 * The tables bench/collector-load.ts prints, and the readings behind them:
 * a step's result, where a sample's time went, and a thread's scheduler
 * statistics.
 */
import { readFileSync } from 'node:fs';

export function quantile(sorted: number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN;
}

/** A thread's CPU time and time spent runnable but waiting for a CPU (ms), from /proc/<pid>/schedstat. */
export function schedstat(pid: number | string = 'self'): { cpuMs: number; waitMs: number } {
  try {
    const [cpu = '0', wait = '0'] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/);
    return { cpuMs: Number(cpu) / 1e6, waitMs: Number(wait) / 1e6 };
  } catch {
    return { cpuMs: NaN, waitMs: NaN };
  }
}

/** p50 / p99 of raw ms samples. */
export function pp(v: number[]): string {
  const s = [...v].sort((a, b) => a - b);
  return `${quantile(s, 0.5)} / ${quantile(s, 0.99)}`;
}

/**
 * Where a sample's time goes, each from its production (cumulative, ms):
 * written by its agent, received by the collector (handed to the write queue),
 * committed, and acknowledged back at the agent.
 */
export interface Stages {
  written: number[];
  received: number[];
  committed: number[];
  acked: number[];
}

export interface StepResult {
  agents: number;
  rate: number;
  offered: number;
  ackedRate: number;
  cpu: number;
  rss: number;
  p50: number;
  p99: number;
  max: number;
  lost: number;
  sent: number;
  stored: number;
  acked: number;
  errors: number;
  batches: number;
  paused: number;
  /** Collector CPU per stored sample, µs (window and backlog): robust to the CPU the machine's load withholds. */
  cpuPerSampleUs: number;
  /** The collector's event-loop delay p99 and max, ms. */
  loopP99: number;
  loopMax: number;
  /** The collector's event-loop thread, over the production window: ms per s on a CPU and ms per s runnable but waiting for one. */
  loopThreadCpu: number;
  loopThreadWait: number;
  /** The agents' worker processes together, cores from the start of production to their end. */
  workerCores: number;
  stages: Stages;
  /** Whether the agents' workers shared the collector's session (scheduler autogroup). */
  shared: boolean;
}

export const HEADER =
  '| agents | samples/s each | offered samples/s | acked within 2 s /s | collector CPU (cores) | collector RSS peak (MiB) | ack p50 (ms) | ack p99 (ms) | ack max (ms) | produced | stored | acked | unacked, held by agents | lost | transactions | queue full | stream errors | collector CPU per sample (µs) | collector event-loop delay p99 / max (ms) |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n';

export function row(r: StepResult): string {
  return `| ${r.agents} | ${r.rate} | ${r.offered.toFixed(0)} | ${r.ackedRate.toFixed(0)} | ${r.cpu.toFixed(2)} | ${r.rss.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.max} | ${r.sent} | ${r.stored} | ${r.acked} | ${r.sent - r.acked} | ${r.lost} | ${r.batches} | ${r.paused} | ${r.errors} | ${r.cpuPerSampleUs} | ${r.loopP99.toFixed(0)} / ${r.loopMax.toFixed(0)} |\n`;
}

const STAGE_HEADER =
  "| agents | samples/s each | agents' workers ran | collector loop thread on CPU (ms/s) | collector loop thread runnable, waiting for a CPU (ms/s) | agents' workers (cores) | written p50 / p99 | received | committed | acked |\n|---:|---:|---|---:|---:|---:|---|---|---|---|\n";

export function stageRow(r: StepResult): string {
  const st = r.stages;
  return `| ${r.agents} | ${r.rate} | ${r.shared ? "in the collector's session" : 'own sessions'} | ${r.loopThreadCpu.toFixed(0)} | ${r.loopThreadWait.toFixed(0)} | ${r.workerCores.toFixed(2)} | ${pp(st.written)} | ${pp(st.received)} | ${pp(st.committed)} | ${pp(st.acked)} |\n`;
}

export function printStages(rs: StepResult[]): void {
  process.stdout.write(
    "\nwhere a sample's time goes (ms from its production, cumulative: written by its agent, received by the collector's write queue, committed, acknowledged at the agent):\n\n",
  );
  process.stdout.write(STAGE_HEADER);
  for (const r of rs) process.stdout.write(stageRow(r));
}
