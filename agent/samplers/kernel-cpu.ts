/**
 * The kernel's CPU time on this node's CPUs, from /proc/stat (proc(5)): per
 * CPU, ticks of user, system, softirq, ... since boot. Restricted to the
 * node's CPUs, which in the lab are its own (lab/cpu-sets.ts pins each node's
 * agent, tools and rule programming to a disjoint share), so the system and
 * softirq time a dataplane spends on a node's packets is counted where it
 * ran. Pure parsing here, tested on captures in test/fixtures/proc-stat/; the
 * reader is a few lines at the end.
 */
import { readFile } from 'node:fs/promises';
import { allowedCpus } from '../../core/cpu-list.js';
import { asCniBenchError, parseError } from '../../core/errors.js';
import type { KernelCpu } from '../../gen/cnibench/v1/agent.js';
import type { ProcessSampler } from './process-sampler.js';

export interface CpuTicks {
  user: number;
  nice: number;
  system: number;
  idle: number;
  iowait: number;
  irq: number;
  softirq: number;
  steal: number;
}

export interface ProcStatCpus {
  /** The first "cpu" line: all online CPUs. */
  total: CpuTicks;
  /** Each "cpuN" line; offline CPUs have none. */
  perCpu: Map<number, CpuTicks>;
}

const FILE = '/proc/stat';
const FIELDS: readonly (keyof CpuTicks)[] = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal'];

function ticksOf(line: string, text: string): CpuTicks {
  const parts = line.trim().split(/\s+/).slice(1);
  // Kernels since 2.6.11 print at least these eight; fewer means the line was cut.
  if (parts.length < FIELDS.length)
    throw parseError(FILE, text, `${line.split(/\s+/)[0]}: ${parts.length} fields, expected at least 8 (truncated?)`);
  const out = {} as CpuTicks;
  for (const [i, f] of FIELDS.entries()) {
    const v = parts[i] as string;
    if (!/^\d+$/.test(v)) throw parseError(FILE, text, `${f} ${JSON.stringify(v)} is not a whole number`);
    out[f] = Number(v);
  }
  return out;
}

/**
 * The CPU lines of /proc/stat. They must be followed by another line (the
 * kernel writes "intr" next): a text that ends inside the CPU block was cut,
 * and a CPU missing from it would read as no time at all.
 */
export function parseProcStatCpus(text: string): ProcStatCpus {
  const lines = text.split('\n');
  if (!/^cpu\s/.test(lines[0] ?? '')) throw parseError(FILE, text, 'does not start with the "cpu" line');
  const total = ticksOf(lines[0] as string, text);
  const perCpu = new Map<number, CpuTicks>();
  let i = 1;
  for (; i < lines.length; i++) {
    const m = /^cpu(\d+)\s/.exec(lines[i] as string);
    if (!m) break;
    perCpu.set(Number(m[1]), ticksOf(lines[i] as string, text));
  }
  if (perCpu.size === 0) throw parseError(FILE, text, 'no per-CPU "cpuN" lines');
  if (i >= lines.length || !/^[a-z_]+\s/.test(lines[i] as string))
    throw parseError(FILE, text, 'the CPU lines are not followed by another line (truncated?)');
  return { total, perCpu };
}

/** Pure: the ticks of `cpus` summed; a CPU /proc/stat does not list (offline, or not this machine's) is an error. */
export function sumCpus(stat: ProcStatCpus, cpus: readonly number[]): CpuTicks {
  const out: CpuTicks = { user: 0, nice: 0, system: 0, idle: 0, iowait: 0, irq: 0, softirq: 0, steal: 0 };
  for (const c of cpus) {
    const t = stat.perCpu.get(c);
    if (!t) throw parseError(FILE, `cpu${c}`, `CPU ${c} is not listed (online: ${[...stat.perCpu.keys()].join(',')})`);
    for (const f of FIELDS) out[f] += t[f];
  }
  return out;
}

export interface KernelCpuReaderOptions {
  procRoot?: string;
  /** The node's CPUs; default this process's affinity (the lab starts each agent on its node's CPUs). */
  cpus?: readonly number[];
  ticksPerSecond?: number;
}

/** Reads the node's kernel CPU, the agent's own and the dataplane processes' (cumulative; a few file reads). */
export class KernelCpuReader {
  private cpus: Promise<readonly number[]> | undefined;

  constructor(
    private readonly processes: ProcessSampler,
    private readonly opts: KernelCpuReaderOptions = {},
  ) {}

  async read(errors: string[]): Promise<KernelCpu | undefined> {
    try {
      this.cpus ??= this.opts.cpus ? Promise.resolve(this.opts.cpus) : allowedCpus();
      const cpus = await this.cpus;
      const readStat = async (): Promise<{ text: string; atMs: number }> => {
        const start = performance.now();
        const text = await readFile(`${this.opts.procRoot ?? '/proc'}/stat`, 'utf8');
        return { text, atMs: performance.timeOrigin + (start + performance.now()) / 2 };
      };
      const [{ text, atMs }, procs] = await Promise.all([readStat(), this.processes.cpuTimes()]);
      const t = sumCpus(parseProcStatCpus(text), cpus);
      const self = process.cpuUsage();
      errors.push(...procs.errors);
      return {
        cpus: [...cpus],
        ticksPerSecond: this.opts.ticksPerSecond ?? 100,
        ...t,
        agentUserSeconds: self.user / 1e6,
        agentSystemSeconds: self.system / 1e6,
        processes: procs.processes,
        readAtMs: atMs,
      };
    } catch (err) {
      errors.push(`kernel-cpu: ${asCniBenchError(err).message}`);
      return undefined;
    }
  }
}
