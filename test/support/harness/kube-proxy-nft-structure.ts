/**
 * The structure of one nftables table from `nft -j list ruleset`, for comparing
 * what the real kube-proxy writes with what the lab's emulation writes: chains
 * (hook, priority, policy) with their rules in order, sets and maps with their
 * elements. Rules are kept as nft's own JSON expressions (both sides come from
 * the same nft, so equal rules are equal JSON); handles, which number objects
 * in creation order, are dropped. What is normalized beyond that is listed with
 * its reason in NFT_NORMALIZATIONS. Pure.
 */

import { ipInCidr } from './kube-proxy-iptables-structure.js';

type Obj = Record<string, unknown>;

export interface NftChain {
  /** "type hook priority policy" of a base chain, "" for a regular chain. */
  base: string;
  comment?: string;
  rules: string[];
}

export interface NftSet {
  kind: 'set' | 'map';
  type: string;
  comment?: string;
  elements: string[];
}

export interface NftTable {
  comment?: string;
  chains: Record<string, NftChain>;
  sets: Record<string, NftSet>;
}

/** Every table of the ruleset, keyed "family name" (e.g. "ip kube-proxy"). */
export function parseNftTables(json: string): Record<string, NftTable> {
  const items = (JSON.parse(json) as { nftables?: Obj[] }).nftables;
  if (!Array.isArray(items)) throw new Error('nft: expected an object with an "nftables" array');
  const tables: Record<string, NftTable> = {};
  const tableOf = (b: Obj): NftTable => {
    const key = `${b.family} ${b.table ?? b.name}`;
    tables[key] ??= { chains: {}, sets: {} };
    return tables[key];
  };
  for (const item of items) {
    const [kind, body] = Object.entries(item)[0] ?? [];
    const b = body as Obj;
    if (kind === 'table') {
      const t = tableOf(b);
      if (typeof b.comment === 'string') t.comment = b.comment;
    } else if (kind === 'chain') {
      const base = b.hook ? [b.type, b.hook, b.prio, b.policy].join(' ') : '';
      tableOf(b).chains[b.name as string] = {
        base,
        ...(typeof b.comment === 'string' ? { comment: b.comment } : {}),
        rules: [],
      };
    } else if (kind === 'rule') {
      const chain = tableOf(b).chains[b.chain as string];
      if (!chain) throw new Error(`nft: rule for unknown chain ${String(b.chain)}`);
      chain.rules.push(JSON.stringify(b.expr) + (typeof b.comment === 'string' ? ` # ${b.comment}` : ''));
    } else if (kind === 'set' || kind === 'map') {
      const type = [b.type, b.map].flat().filter(Boolean).join(' . ');
      const elements = ((b.elem as unknown[] | undefined) ?? []).map((e) => JSON.stringify(e)).sort();
      tableOf(b).sets[b.name as string] = {
        kind,
        type,
        ...(typeof b.comment === 'string' ? { comment: b.comment } : {}),
        elements,
      };
    }
  }
  return tables;
}

export const NFT_NORMALIZATIONS = [
  'table ip6 kube-proxy (real only; kube-proxy runs dual-stack when the namespace has IPv6): IPv4 packets never pass ip6-family hooks, and the lab is IPv4 only',
  "set and map elements for Services other than the compared ones (the harness apiserver's own default/kubernetes, which has no endpoints: a cluster-ips element and a no-endpoint-services element pointing at reject-chain)",
  'element order in sets and maps: a set is unordered',
] as const;

const SERVICE_KEYED = ['cluster-ips', 'service-ips', 'no-endpoint-services', 'firewall-ips'];

/** The first IPv4 address in an element's JSON (its key's address for the Service-keyed sets). */
function keyIp(element: string): string | undefined {
  return /"(\d+\.\d+\.\d+\.\d+)"/.exec(element)?.[1];
}

/** The table with NFT_NORMALIZATIONS applied (element order is already sorted by parseNftTables). */
export function normalizeNftTable(t: NftTable, clusterIps: readonly string[], serviceCidr: string): NftTable {
  const ours = new Set(clusterIps);
  const sets: Record<string, NftSet> = {};
  for (const [name, s] of Object.entries(t.sets)) {
    const elements = SERVICE_KEYED.includes(name)
      ? s.elements.filter((e) => {
          const ip = keyIp(e);
          return ip === undefined || !ipInCidr(ip, serviceCidr) || ours.has(ip);
        })
      : s.elements;
    sets[name] = { ...s, elements };
  }
  return { ...t, sets };
}

/** The per-Service part: service-ips elements for `clusterIps` and the chains they go to. */
export interface NftServiceView {
  serviceIps: string[];
  clusterIps: string[];
  serviceChains: Record<string, string[]>;
  /** Per-endpoint chains (kube-proxy makes them only for session affinity). */
  endpointChains: string[];
}

export function nftServiceView(t: NftTable, clusterIps: readonly string[]): NftServiceView {
  const ours = new Set(clusterIps);
  const serviceIps = (t.sets['service-ips']?.elements ?? []).filter((e) => ours.has(keyIp(e) ?? ''));
  const targets = serviceIps.map((e) => /"target":"([^"]+)"/.exec(e)?.[1] ?? '');
  return {
    serviceIps,
    clusterIps: (t.sets['cluster-ips']?.elements ?? []).filter((e) => ours.has(keyIp(e) ?? '')),
    serviceChains: Object.fromEntries(targets.map((c) => [c, t.chains[c]?.rules ?? []])),
    endpointChains: Object.keys(t.chains).filter((c) => c.startsWith('endpoint-')),
  };
}

/** Chain and set names in `a` but not in `b`. */
export function nftObjectsOnlyIn(a: NftTable, b: NftTable): string[] {
  return [
    ...Object.keys(a.chains)
      .filter((c) => !(c in b.chains))
      .map((c) => `chain ${c}`),
    ...Object.keys(a.sets)
      .filter((s) => !(s in b.sets))
      .map((s) => `${a.sets[s]?.kind} ${s}`),
  ];
}
