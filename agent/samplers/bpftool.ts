/**
 * Parses `bpftool map show -j` (and `-p`), the list of BPF maps on the node.
 * Pure, so it is tested on captured output; a malformed document is an error
 * naming bpftool, never an empty list.
 */
import { parseError } from '../../core/errors.js';

export interface BpfMap {
  id: number;
  name: string;
  type: string;
  maxEntries: number;
  /** Kernel-accounted memory (bytes_memlock), 0 when the kernel does not say. */
  bytesMemlock: number;
}

export function parseBpftoolMapShow(stdout: string): BpfMap[] {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch (err) {
    throw parseError('bpftool', stdout, `invalid JSON: ${(err as Error).message}`);
  }
  if (doc && typeof doc === 'object' && 'error' in doc) throw parseError('bpftool', stdout, `bpftool reported an error: ${String((doc as { error: unknown }).error)}`);
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
