/**
 * Parses `nft -j list ruleset` into counts: tables, chains, rules, and every
 * set and map with its element count (kube-proxy's nftables `service-ips` map
 * among them). Pure; a document that is not nft's JSON schema is an error
 * naming nft, so a truncated dump never passes as a small ruleset.
 */
import { parseError } from '../../core/errors.js';
import { parseToolJson } from '../../core/tool-json.js';

export interface NftSetCount {
  family: string;
  table: string;
  name: string;
  kind: 'set' | 'map';
  elements: number;
}

export interface NftSummary {
  tables: { family: string; name: string }[];
  chains: number;
  rules: number;
  /** Rules per "family table" (e.g. "ip kube-proxy"). */
  rulesByTable: Record<string, number>;
  sets: NftSetCount[];
  /** Elements of kube-proxy's service-ips map (table ip kube-proxy), undefined when it does not exist. */
  serviceIps: number | undefined;
}

type Obj = Record<string, unknown>;

export function parseNftRuleset(stdout: string): NftSummary {
  const doc = parseToolJson('nft', stdout);
  const items = (doc as Obj | null)?.nftables;
  if (!Array.isArray(items)) throw parseError('nft', stdout, 'expected an object with an "nftables" array');
  const out: NftSummary = { tables: [], chains: 0, rules: 0, rulesByTable: {}, sets: [], serviceIps: undefined };
  items.forEach((item: unknown, i) => {
    if (!item || typeof item !== 'object') throw parseError('nft', stdout, `item ${i} is not an object`);
    const [kind, body] = Object.entries(item as Obj)[0] ?? [];
    const b = body as Obj | undefined;
    const str = (field: string): string => {
      const v = b?.[field];
      if (typeof v !== 'string') throw parseError('nft', stdout, `item ${i} (${kind}) lacks "${field}"`);
      return v;
    };
    switch (kind) {
      case 'metainfo':
        return;
      case 'table':
        out.tables.push({ family: str('family'), name: str('name') });
        return;
      case 'chain':
        out.chains++;
        return;
      case 'rule': {
        out.rules++;
        const key = `${str('family')} ${str('table')}`;
        out.rulesByTable[key] = (out.rulesByTable[key] ?? 0) + 1;
        return;
      }
      case 'set':
      case 'map': {
        const elem = b?.elem;
        if (elem !== undefined && !Array.isArray(elem))
          throw parseError('nft', stdout, `item ${i} (${kind}) has a non-array "elem"`);
        const s: NftSetCount = {
          family: str('family'),
          table: str('table'),
          name: str('name'),
          kind,
          elements: elem?.length ?? 0,
        };
        out.sets.push(s);
        if (kind === 'map' && s.family === 'ip' && s.table === 'kube-proxy' && s.name === 'service-ips')
          out.serviceIps = s.elements;
        return;
      }
      default:
        // Other object kinds (flowtable, counter, quota, ct helper, ...) exist but are not counted.
        return;
    }
  });
  return out;
}

/**
 * Reads the outcome of `nft -j list map ip kube-proxy service-ips`: the
 * element count, or undefined when nft says the table or map does not exist
 * (exit 1, "No such file or directory"). Any other failure is an error naming
 * nft with the sample of its output.
 */
export function parseServiceIpsListing(r: { exitCode: number; stdout: string; stderr: string }): number | undefined {
  if (r.exitCode !== 0) {
    if (r.exitCode === 1 && /No such file or directory/.test(r.stderr)) return undefined;
    throw parseError('nft', r.stderr || r.stdout, `list map service-ips exited with ${r.exitCode}`);
  }
  const n = parseNftRuleset(r.stdout).serviceIps;
  if (n === undefined)
    throw parseError('nft', r.stdout, 'listing of map ip kube-proxy service-ips does not contain that map');
  return n;
}
