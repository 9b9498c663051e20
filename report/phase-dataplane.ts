/**
 * Summarises the dataplane samples of each node over one phase (the samples
 * whose time falls inside it, boundary samples included): conntrack peak and
 * maximum, rule and map sizes at the end, BPF map memory at the end with the
 * largest maps, and CPU (average and max) and peak memory of the named
 * dataplane processes. Pure.
 */
import type { BpfMapMemory, DataplaneSample } from '../gen/cnibench/v1/agent.js';
import type { SampleRecord } from './records.js';

export interface ProcessSummary {
  name: string;
  /** Mean and max of the per-sample CPU rates; null when no sample had a rate. */
  cpuMillicoresAvg: number | null;
  cpuMillicoresMax: number | null;
  rssBytesMax: number;
}

/**
 * BPF map memory the node showed at the end of the phase: on a Cilium node the
 * maps pinned in its own bpffs; elsewhere every map on the kernel (which other
 * nodes of a lab share).
 */
export interface BpfMemory {
  scope: 'cilium-bpffs' | 'kernel';
  maps: number;
  bytesMemlock: number;
  top: BpfMapMemory[];
  /** Cilium LB: frontends with all their backends, of all frontends. */
  lbFrontends?: { programmed: number; total: number };
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
  bpf: BpfMemory | null;
  errors: string[];
}

/** The last sample's BPF map memory: Cilium's pinned maps where it read them, else the kernel-wide totals. */
export function bpfMemoryOf(samples: readonly DataplaneSample[]): BpfMemory | null {
  const withCilium = [...samples].reverse().find((s) => s.cilium);
  if (withCilium?.cilium) {
    const c = withCilium.cilium;
    return {
      scope: 'cilium-bpffs',
      maps: c.pinnedMaps,
      bytesMemlock: c.pinnedBytesMemlock,
      top: c.topMaps,
      lbFrontends: { programmed: c.programmedFrontends, total: c.frontends },
    };
  }
  const withBpf = [...samples].reverse().find((s) => s.bpf && s.bpf.maps > 0);
  if (!withBpf?.bpf) return null;
  return { scope: 'kernel', maps: withBpf.bpf.maps, bytesMemlock: withBpf.bpf.bytesMemlock, top: withBpf.bpf.topMaps };
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
    bpf: bpfMemoryOf(samples),
    errors: [...new Set(samples.flatMap((s) => s.errors))],
  };
}

/** One summary per node that sampled within [startMs, endMs]. */
export function summarisePhase(samples: readonly SampleRecord[], startMs: number, endMs: number): NodePhaseSummary[] {
  const byNode = new Map<string, DataplaneSample[]>();
  for (const r of samples) {
    const t = r.sample.timeMs;
    // Servers-only samples bracket rounds for the CPU guard, Hubble readings verify a condition: their dataplane fields were never read.
    if (t < startMs || t > endMs || r.sample.serversOnly || r.sample.hubble) continue;
    byNode.set(r.agentId, [...(byNode.get(r.agentId) ?? []), r.sample]);
  }
  return [...byNode]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([node, list]) =>
      summariseNode(
        node,
        list.sort((a, b) => a.timeMs - b.timeMs),
      ),
    );
}
