/**
 * Removes what labs left behind: namespaces with the lab prefix whose owning
 * process is gone, the processes inside them (a Cilium lab's control plane and
 * cilium-agents too, which run in its namespaces; a node's bpffs and pins
 * live only in the mount namespace its holder process keeps, and the holder
 * sits in the node's network namespace and cgroup), their cgroup subtrees
 * (Cilium labs) and their state files.
 */
import type { Logger } from '../core/log.js';
import { labCgroupIds, removeLabCgroups } from './cilium/cgroups.js';
import { deleteNamespaces, listNamespaces } from './netns.js';
import { labIdOf } from './plan.js';
import { liveLabIds, removeLabState } from './state.js';

function cgroupLabIds(): string[] {
  try {
    return labCgroupIds();
  } catch {
    return []; // no cgroup2 hierarchy: no Cilium lab ever ran here
  }
}

/** Returns the ids of the labs it cleaned. */
export async function removeLeftovers(log: Logger, opts: { all?: boolean } = {}): Promise<string[]> {
  const live = opts.all ? new Set<string>() : await liveLabIds();
  const byLab = new Map<string, string[]>();
  for (const ns of await listNamespaces()) {
    const id = labIdOf(ns);
    if (id && !live.has(id)) byLab.set(id, [...(byLab.get(id) ?? []), ns]);
  }
  for (const id of cgroupLabIds()) if (!live.has(id) && !byLab.has(id)) byLab.set(id, []);
  for (const [id, names] of byLab) {
    log.warn('removing leftovers of an earlier lab', { lab: id, namespaces: names.length });
    await deleteNamespaces(names);
    await removeLabCgroups(id).catch((err: Error) =>
      log.error('cannot remove a leftover lab cgroup', { lab: id, error: err.message }),
    );
    await removeLabState(id);
  }
  return [...byLab.keys()];
}
