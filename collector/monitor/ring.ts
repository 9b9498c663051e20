/**
 * Consistent hashing over node names: every node sits on a ring at the hash
 * of its name, and probes the next k nodes clockwise. So each node on the ring
 * is probed by exactly min(k, n-1) others (coverage is even by construction,
 * unlike k random peers), and a node joining or leaving changes the peers of
 * only the k nodes before it. Pure.
 */
import { createHash } from 'node:crypto';

/** Position on the ring: the first 64 bits of SHA-256 of the name. */
export function ringPosition(name: string): bigint {
  return createHash('sha256').update(name).digest().readBigUInt64BE(0);
}

function byPosition(a: { pos: bigint; name: string }, b: { pos: bigint; name: string }): number {
  return a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : a.name.localeCompare(b.name);
}

/**
 * The `k` members after `self` on the ring (self excluded; a self that is not a
 * member starts from its own position). Members are deduplicated.
 */
export function selectPeers(self: string, members: readonly string[], k: number): string[] {
  const ring = [...new Set(members)]
    .filter((m) => m !== self)
    .map((name) => ({ name, pos: ringPosition(name) }))
    .sort(byPosition);
  if (ring.length === 0 || k <= 0) return [];
  const me = { name: self, pos: ringPosition(self) };
  let start = ring.findIndex((m) => byPosition(m, me) > 0);
  if (start < 0) start = 0;
  const n = Math.min(k, ring.length);
  return Array.from({ length: n }, (_, i) => (ring[(start + i) % ring.length] as { name: string }).name);
}

/** Who probes whom when every member takes `k` peers: target -> sources. */
export function incomingOf(members: readonly string[], k: number): Map<string, string[]> {
  const out = new Map<string, string[]>(members.map((m) => [m, []]));
  for (const source of new Set(members)) for (const t of selectPeers(source, members, k)) out.get(t)?.push(source);
  return out;
}
