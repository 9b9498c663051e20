/**
 * Totals over the node's BPF maps, and the size of Cilium's LB service map when
 * it exists (the map whose overflow shows up as a false RPS collapse in a scale
 * sweep). Pure over parsed `bpftool map show -j`.
 */
import type { BpfMapMemory, BpfMapTotals } from '../../gen/cnibench/v1/agent.js';
import type { BpfMap } from './bpftool.js';

/** Cilium names its IPv4 service map cilium_lb4_services_v2; bpftool shows the first 15 characters. */
const LB_SERVICE_MAP = /^cilium_lb4_serv/;

/** The map to count entries of, when the node has Cilium's LB service map. */
export function lbServiceMap(maps: readonly BpfMap[]): BpfMap | undefined {
  return maps.find((m) => LB_SERVICE_MAP.test(m.name));
}

/** The largest maps a sample names. */
export const TOP_MAPS = 8;

/** Pure: the `n` largest maps by kernel-accounted memory, named by their pin where pinned (bpftool cuts names at 15 characters). */
export function topMaps(maps: readonly BpfMap[], n = TOP_MAPS): BpfMapMemory[] {
  return [...maps]
    .sort((a, b) => b.bytesMemlock - a.bytesMemlock || a.id - b.id)
    .slice(0, n)
    .map((m) => {
      const pin = m.pinned?.[0];
      return {
        name: pin ? pin.slice(pin.lastIndexOf('/') + 1) : m.name || `id-${m.id}`,
        type: m.type,
        maxEntries: m.maxEntries,
        bytesMemlock: m.bytesMemlock,
      };
    });
}

/** `lbEntries`: the LB service map's entry count, when it was dumped. */
export function summariseBpfMaps(maps: readonly BpfMap[], lbEntries?: number): BpfMapTotals {
  const lb = lbServiceMap(maps);
  return {
    maps: maps.length,
    maxEntries: maps.reduce((n, m) => n + m.maxEntries, 0),
    bytesMemlock: maps.reduce((n, m) => n + m.bytesMemlock, 0),
    lbServiceEntries: lb ? lbEntries : undefined,
    lbServiceMaxEntries: lb?.maxEntries ?? 0,
    topMaps: topMaps(maps),
  };
}
