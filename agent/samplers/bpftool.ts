/**
 * Parses `bpftool map show -j` (and `-p`), the list of BPF maps on the node.
 * Pure, so it is tested on captured output; a malformed document is an error
 * naming bpftool, never an empty list.
 */
import { parseError } from '../../core/errors.js';
import { parseToolJson } from '../../core/tool-json.js';

/** bpftool -j output; its {"error": ...} object is an error naming bpftool. */
function parseBpftoolJson(stdout: string): unknown {
  const doc = parseToolJson('bpftool', stdout);
  if (doc && typeof doc === 'object' && 'error' in doc) throw parseError('bpftool', stdout, `bpftool reported an error: ${String((doc as { error: unknown }).error)}`);
  return doc;
}

export interface BpfMap {
  id: number;
  name: string;
  type: string;
  maxEntries: number;
  /** Kernel-accounted memory (bytes_memlock), 0 when the kernel does not say. */
  bytesMemlock: number;
}

export function parseBpftoolMapShow(stdout: string): BpfMap[] {
  const doc = parseBpftoolJson(stdout);
  if (!Array.isArray(doc)) throw parseError('bpftool', stdout, 'expected a JSON array of maps');
  return doc.map((m: unknown, i) => {
    const o = m as Record<string, unknown>;
    if (typeof o?.id !== 'number' || typeof o.type !== 'string' || typeof o.max_entries !== 'number') {
      throw parseError('bpftool', stdout, `map ${i} lacks id, type or max_entries`);
    }
    return {
      id: o.id,
      name: typeof o.name === 'string' ? o.name : '',
      type: o.type,
      maxEntries: o.max_entries,
      bytesMemlock: typeof o.bytes_memlock === 'number' ? o.bytes_memlock : 0,
    };
  });
}

/**
 * Counts the entries in `bpftool map dump ... -j` (used for Cilium's LB
 * service map, whose overflow would otherwise pass for an RPS collapse).
 * An error object or malformed output is an error naming bpftool.
 */
export function parseBpftoolMapDump(stdout: string): number {
  const doc = parseBpftoolJson(stdout);
  if (!Array.isArray(doc)) throw parseError('bpftool', stdout, 'expected a JSON array of entries');
  doc.forEach((e: unknown, i) => {
    if (!e || typeof e !== 'object' || !('key' in e)) throw parseError('bpftool', stdout, `entry ${i} has no key`);
  });
  return doc.length;
}
