/**
 * BPF maps per name for the monitoring gauges: maximum entries and memory of
 * every map (`bpftool map show -j`), and entries where they can be counted
 * cheaply: Cilium's LB service map (the sampler dumps it already) and maps
 * whose names start with a configured prefix (`bpftool map dump`). Maps are a
 * kernel-wide resource, so the host network namespace does not matter here.
 */
import { netnsAt, runInNetns } from '../../core/netns.js';
import type { BpfMapState } from '../../gen/cnibench/v1/agent.js';
import { lbServiceMap } from '../samplers/bpf-totals.js';
import { type BpfMap, parseBpftoolMapDump, parseBpftoolMapShow } from '../samplers/bpftool.js';

/** At most this many maps are dumped per read, so a prefix that matches many maps cannot make a read heavy. */
export const MAX_COUNTED_MAPS = 8;

/** Maps whose entries a read counts: those matching a prefix (at most MAX_COUNTED_MAPS), never the LB map (counted by the sampler). */
export function mapsToCount(maps: readonly BpfMap[], prefixes: readonly string[]): BpfMap[] {
  const lb = lbServiceMap(maps);
  return maps.filter((m) => m !== lb && prefixes.some((p) => m.name.startsWith(p))).slice(0, MAX_COUNTED_MAPS);
}

/** Maps of one name summed (bpftool names are not unique); entries summed over the maps that were counted. */
export function groupBpfMaps(maps: readonly BpfMap[], entriesById: ReadonlyMap<number, number>): BpfMapState[] {
  const byName = new Map<string, BpfMapState>();
  for (const m of maps) {
    const name = m.name || `id-${m.id}`;
    const g = byName.get(name) ?? { name, type: m.type, maps: 0, maxEntries: 0, bytesMemlock: 0, entries: undefined };
    g.maps++;
    g.maxEntries += m.maxEntries;
    g.bytesMemlock += m.bytesMemlock;
    const n = entriesById.get(m.id);
    if (n !== undefined) g.entries = (g.entries ?? 0) + n;
    if (g.type !== m.type) g.type = 'mixed';
    byName.set(name, g);
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Reads the maps; `lbEntries` is the LB service map's count from the dataplane sample, when it has one. */
export async function readBpfMaps(
  hostNetns: string,
  prefixes: readonly string[],
  lbEntries: number | undefined,
  signal?: AbortSignal,
): Promise<BpfMapState[]> {
  const exec = async (args: string[]): Promise<string> =>
    (await runInNetns(netnsAt(hostNetns), 'rules-dump', 'bpftool', args, signal ? { signal } : {})).stdout;
  const maps = parseBpftoolMapShow(await exec(['map', 'show', '-j']));
  const counts = new Map<number, number>();
  const lb = lbServiceMap(maps);
  if (lb && lbEntries !== undefined) counts.set(lb.id, lbEntries);
  for (const m of mapsToCount(maps, prefixes))
    counts.set(m.id, parseBpftoolMapDump(await exec(['map', 'dump', 'id', String(m.id), '-j'])));
  return groupBpfMaps(maps, counts);
}
