/**
 * Parses `bpftool map show -j` (and `-p`), the list of BPF maps on the node.
 * Pure, so it is tested on captured output; a malformed document is an error
 * naming bpftool, never an empty list.
 */
import { parseError } from '../../core/errors.js';
import { parseToolJson } from '../../core/tool-json.js';

/** bpftool -j output; its {"error": ...} object is an error naming bpftool. */
export function parseBpftoolJson(stdout: string): unknown {
  const doc = parseToolJson('bpftool', stdout);
  if (doc && typeof doc === 'object' && 'error' in doc)
    throw parseError('bpftool', stdout, `bpftool reported an error: ${String((doc as { error: unknown }).error)}`);
  return doc;
}

export interface BpfMap {
  id: number;
  name: string;
  type: string;
  maxEntries: number;
  /** Kernel-accounted memory (bytes_memlock), 0 when the kernel does not say. */
  bytesMemlock: number;
  /** Where the map is pinned (`bpftool -f`); empty without -f or when unpinned. */
  pinned?: string[];
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
      pinned: Array.isArray(o.pinned) ? o.pinned.filter((p): p is string => typeof p === 'string') : [],
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

/** One entry of a raw map dump: key bytes and value bytes (per CPU for per-CPU maps). */
export interface DumpEntry {
  key: number[];
  /** Plain maps: the value's bytes. */
  value?: number[];
  /** Per-CPU maps: one value per CPU. */
  values?: number[][];
}

/** bpftool's bytes ("0x1f" strings) as numbers; anything else is an error naming bpftool. */
function bytesOf(stdout: string, what: string, v: unknown): number[] {
  if (!Array.isArray(v)) throw parseError('bpftool', stdout, `${what} is not a byte array`);
  return v.map((b) => {
    const n = typeof b === 'string' && /^0x[0-9a-f]{1,2}$/i.test(b) ? Number.parseInt(b.slice(2), 16) : Number.NaN;
    if (Number.isNaN(n)) throw parseError('bpftool', stdout, `${what} has a byte that is not 0xNN: ${String(b)}`);
    return n;
  });
}

/**
 * The entries of `bpftool map dump ... -j` as bytes, for maps whose layout the
 * caller decodes (bpftool prints raw bytes for maps without BTF and adds a
 * `formatted` view for maps with it; the raw bytes are always there).
 */
export function parseBpftoolDumpEntries(stdout: string): DumpEntry[] {
  const doc = parseBpftoolJson(stdout);
  if (!Array.isArray(doc)) throw parseError('bpftool', stdout, 'expected a JSON array of entries');
  return doc.map((e: unknown, i): DumpEntry => {
    const o = e as Record<string, unknown>;
    if (!o || typeof o !== 'object' || !('key' in o)) throw parseError('bpftool', stdout, `entry ${i} has no key`);
    const key = bytesOf(stdout, `entry ${i} key`, o.key);
    if (Array.isArray(o.values)) {
      return {
        key,
        values: o.values.map((v, c) => bytesOf(stdout, `entry ${i} cpu ${c} value`, (v as { value?: unknown })?.value)),
      };
    }
    return { key, value: bytesOf(stdout, `entry ${i} value`, o.value) };
  });
}
