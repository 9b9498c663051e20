/**
 * Turns one dataplane sample into gauge series (pure, so the naming is tested
 * on real-shaped samples): labels are only node and table/map/process, values
 * in base units. A section whose read failed comes back undefined, so the
 * previous values stay (a failed read is never reported as zero); a section
 * read fine replaces its series wholesale, so a map or table that went away
 * loses its series.
 */
import type { BpfMapState, DataplaneSample } from '../../gen/cnibench/v1/agent.js';

export interface Series {
  labels: Record<string, string>;
  value: number;
}

export type SectionName = 'iptables' | 'nft' | 'conntrack' | 'bpf';

export interface DataplaneSeries {
  iptablesRules?: Series[];
  kubeServicesRules?: Series[];
  nftRules?: Series[];
  nftSetElements?: Series[];
  conntrackEntries?: Series[];
  conntrackMax?: Series[];
  conntrackFill?: Series[];
  bpfMaxEntries?: Series[];
  bpfMemory?: Series[];
  bpfEntries?: Series[];
  bpfFill?: Series[];
  processPids: Series[];
  processRss: Series[];
  processThreads: Series[];
  /** CPU seconds used since the previous sample, per running process name (counter increments). */
  processCpuSeconds: Series[];
  /** Sections whose read failed in this sample. */
  failed: SectionName[];
}

const FAILURE_PREFIX: Record<SectionName, string[]> = {
  iptables: ['iptables:'],
  nft: ['nft:'],
  conntrack: ['conntrack:', 'conntrack_max:'],
  bpf: ['bpftool:'],
};

export function failedSections(errors: readonly string[]): SectionName[] {
  return (Object.keys(FAILURE_PREFIX) as SectionName[]).filter((s) =>
    errors.some((e) => FAILURE_PREFIX[s].some((p) => e.startsWith(p))),
  );
}

type Sample = Omit<DataplaneSample, 'runId' | 'samplingJobId'>;

export function dataplaneSeries(
  node: string,
  s: Sample,
  maps: readonly BpfMapState[] | undefined,
  intervalMs?: number,
): DataplaneSeries {
  const failed = failedSections(s.errors);
  const ok = (section: SectionName): boolean => !failed.includes(section);
  const one = (value: number): Series[] => [{ labels: { node }, value }];
  const out: DataplaneSeries = { processPids: [], processRss: [], processThreads: [], processCpuSeconds: [], failed };
  if (ok('iptables')) {
    out.iptablesRules = Object.entries(s.iptablesTableRules)
      .sort()
      .map(([table, value]) => ({ labels: { node, table }, value }));
    out.kubeServicesRules = one(s.kubeServicesRules);
  }
  if (ok('nft')) {
    out.nftRules = s.nftRules === undefined ? [] : one(s.nftRules);
    out.nftSetElements = s.nftSets.map((x) => ({
      labels: { node, table: `${x.family} ${x.table}`, map: x.name },
      value: x.elements,
    }));
  }
  if (ok('conntrack')) {
    out.conntrackEntries = one(s.conntrackCount);
    out.conntrackMax = one(s.conntrackMax);
    out.conntrackFill = s.conntrackMax > 0 ? one(s.conntrackCount / s.conntrackMax) : [];
  }
  if (ok('bpf') && maps) Object.assign(out, bpfSeries(node, maps));
  for (const p of s.processes) {
    const labels = { node, process: p.name };
    out.processPids.push({ labels, value: p.pids.length });
    if (!p.pids.length) continue;
    out.processRss.push({ labels, value: p.rssBytes });
    out.processThreads.push({ labels, value: p.threads });
    if (p.cpuMillicores !== undefined && intervalMs)
      out.processCpuSeconds.push({ labels, value: (p.cpuMillicores / 1000) * (intervalMs / 1000) });
  }
  return out;
}

function bpfSeries(
  node: string,
  maps: readonly BpfMapState[],
): Pick<DataplaneSeries, 'bpfMaxEntries' | 'bpfMemory' | 'bpfEntries' | 'bpfFill'> {
  const labelled = maps.map((m) => ({ m, labels: { node, map: m.name } }));
  const counted = labelled.filter(({ m }) => m.entries !== undefined);
  return {
    bpfMaxEntries: labelled.map(({ m, labels }) => ({ labels, value: m.maxEntries })),
    bpfMemory: labelled.map(({ m, labels }) => ({ labels, value: m.bytesMemlock })),
    bpfEntries: counted.map(({ m, labels }) => ({ labels, value: m.entries ?? 0 })),
    bpfFill: counted
      .filter(({ m }) => m.maxEntries > 0)
      .map(({ m, labels }) => ({ labels, value: (m.entries ?? 0) / m.maxEntries })),
  };
}
