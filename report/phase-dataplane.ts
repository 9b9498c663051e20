/**
 * Summarises the dataplane samples of each node over one phase (the samples
 * whose time falls inside it, boundary samples included): conntrack peak and
 * maximum, rule and map sizes at the end, and CPU (average and max) and peak
 * memory of the named dataplane processes. Pure.
 */
import type { DataplaneSample } from '../gen/cnibench/v1/agent.js';
import type { SampleRecord } from './records.js';

export interface ProcessSummary {
  name: string;
  /** Mean and max of the per-sample CPU rates; null when no sample had a rate. */
  cpuMillicoresAvg: number | null;
  cpuMillicoresMax: number | null;
  rssBytesMax: number;
}

export interface NodePhaseSummary {
  node: string;
  samples: number;
  conntrackPeak: number;
  conntrackMax: number;
  iptablesRules: number;
  kubeServicesRules: number;
  nftServiceIps: number | null;
  processes: ProcessSummary[];
  errors: string[];
}

function summariseNode(node: string, samples: DataplaneSample[]): NodePhaseSummary {
  const last = samples[samples.length - 1] as DataplaneSample;
  const procs = new Map<string, { rates: number[]; rss: number }>();
  for (const s of samples) {
    for (const p of s.processes) {
      if (!p.pids.length) continue;
      const e = procs.get(p.name) ?? { rates: [], rss: 0 };
      if (p.cpuMillicores !== undefined) e.rates.push(p.cpuMillicores);
      e.rss = Math.max(e.rss, p.rssBytes);
      procs.set(p.name, e);
    }
  }
  return {
    node,
    samples: samples.length,
    conntrackPeak: Math.max(...samples.map((s) => s.conntrackCount)),
    conntrackMax: last.conntrackMax,
    iptablesRules: last.iptablesRules,
    kubeServicesRules: last.kubeServicesRules,
    nftServiceIps: last.nftServiceIps ?? null,
    processes: [...procs].map(([name, e]) => ({
      name,
      cpuMillicoresAvg: e.rates.length ? e.rates.reduce((a, b) => a + b, 0) / e.rates.length : null,
      cpuMillicoresMax: e.rates.length ? Math.max(...e.rates) : null,
      rssBytesMax: e.rss,
    })),
    errors: [...new Set(samples.flatMap((s) => s.errors))],
  };
}

/** One summary per node that sampled within [startMs, endMs]. */
export function summarisePhase(samples: readonly SampleRecord[], startMs: number, endMs: number): NodePhaseSummary[] {
  const byNode = new Map<string, DataplaneSample[]>();
  for (const r of samples) {
    const t = r.sample.timeMs;
    // Servers-only samples bracket rounds for the CPU guard; their dataplane fields were never read.
    if (t < startMs || t > endMs || r.sample.serversOnly) continue;
    byNode.set(r.agentId, [...(byNode.get(r.agentId) ?? []), r.sample]);
  }
  return [...byNode]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([node, list]) => summariseNode(node, list.sort((a, b) => a.timeMs - b.timeMs)));
}
