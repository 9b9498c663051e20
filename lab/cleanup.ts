/**
 * Removes what labs left behind: namespaces with the lab prefix whose owning
 * process is gone, the processes inside them, and their state files.
 */
import type { Logger } from '../core/log.js';
import { deleteNamespaces, listNamespaces } from './netns.js';
import { labIdOf } from './plan.js';
import { liveLabIds, removeLabState } from './state.js';

/** Returns the ids of the labs it cleaned. */
export async function removeLeftovers(log: Logger, opts: { all?: boolean } = {}): Promise<string[]> {
  const live = opts.all ? new Set<string>() : await liveLabIds();
  const byLab = new Map<string, string[]>();
  for (const ns of await listNamespaces()) {
    const id = labIdOf(ns);
    if (id && !live.has(id)) byLab.set(id, [...(byLab.get(id) ?? []), ns]);
  }
  for (const [id, names] of byLab) {
    log.warn('removing leftovers of an earlier lab', { lab: id, namespaces: names.length });
    await deleteNamespaces(names);
    await removeLabState(id);
  }
  return [...byLab.keys()];
}
