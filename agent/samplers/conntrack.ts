/**
 * Pure readers for conntrack fill: `conntrack -C`, `sysctl -n <name>`, and the
 * kernel's per-namespace statistics file /proc/<pid>/net/stat/nf_conntrack,
 * which a sampler can read without starting any process.
 */
import { parseError } from '../../core/errors.js';

function wholeNumber(tool: string, stdout: string): number {
  const t = stdout.trim();
  if (!/^\d+$/.test(t)) throw parseError(tool, stdout, 'expected one whole number');
  return Number(t);
}

export function parseConntrackCount(stdout: string): number {
  return wholeNumber('conntrack', stdout);
}

export function parseSysctlNumber(name: string, stdout: string): number {
  return wholeNumber(`sysctl ${name}`, stdout);
}

export interface NfConntrackStat {
  /** Tracked connections in the namespace (the same figure as `conntrack -C`). */
  entries: number;
  /** Packets dropped because a new entry could not be added (table full), summed over CPUs. */
  drop: number;
  /** Entries evicted early to make room, summed over CPUs. */
  earlyDrop: number;
  /** Entries that lost an insert race, summed over CPUs. */
  insertFailed: number;
}

/** Columns that tell this file from its look-alikes (rt_cache also starts with `entries`). */
const REQUIRED = ['entries', 'drop', 'early_drop', 'insert_failed'] as const;
const TOOL = '/proc/net/stat/nf_conntrack';

/**
 * Parses /proc/<pid>/net/stat/nf_conntrack: a header of column names, then one
 * line of hexadecimal counters per possible CPU. `entries` is the namespace's
 * count and repeats on every line; the other columns are per-CPU and summed.
 */
export function parseNfConntrackStat(text: string): NfConntrackStat {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const header = (lines[0] ?? '').trim().split(/\s+/);
  const missing = REQUIRED.filter((c) => !header.includes(c));
  if (missing.length) throw parseError(TOOL, text, `header lacks ${missing.join(', ')}`);
  const rows = lines.slice(1).map((l) => l.trim().split(/\s+/));
  if (rows.length === 0) throw parseError(TOOL, text, 'no per-CPU line');
  for (const r of rows) {
    if (r.length !== header.length || !r.every((v) => /^[0-9a-f]+$/i.test(v)))
      throw parseError(TOOL, text, `a per-CPU line is not ${header.length} hexadecimal counters`);
  }
  const col = (name: string): number[] => rows.map((r) => Number.parseInt(r[header.indexOf(name)] as string, 16));
  const sum = (name: string): number => col(name).reduce((a, b) => a + b, 0);
  return {
    entries: col('entries')[0] as number,
    drop: sum('drop'),
    earlyDrop: sum('early_drop'),
    insertFailed: sum('insert_failed'),
  };
}
