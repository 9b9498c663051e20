/**
 * One value for a cluster made of nodes that may differ: a description must
 * never pick one node's kernel or instance type and present it as the
 * cluster's. Pure.
 */

/**
 * The distinct non-empty values: the value itself when every node that has
 * one agrees, else each value with its node count, most common first
 * ("6.8.0-1 (2 nodes), 6.1.0-9 (1 node)"). Empty when no node has a value.
 */
export function listValues(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
  if (counts.size <= 1) return [...counts.keys()][0] ?? '';
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([v, n]) => `${v} (${n} node${n === 1 ? '' : 's'})`)
    .join(', ');
}

/** "3 nodes" / "1 node". */
export function nodeCount(n: number): string {
  return `${n} node${n === 1 ? '' : 's'}`;
}
