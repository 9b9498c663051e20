/**
 * Parses `iptables-save` (with or without `-c` counters) into rule counts per
 * table and chain, the length of kube-proxy's KUBE-SERVICES chain, and the
 * counters of kube-proxy's per-service chains. Pure; any line it does not
 * understand is an error naming iptables-save, so a truncated dump never passes
 * as a small ruleset.
 */
import { parseError } from '../../core/errors.js';
import type { ChainCounter } from '../../gen/cnibench/v1/agent.js';

export interface ChainStats {
  policy?: string;
  rules: number;
  packets: number;
  bytes: number;
}

export interface IptablesSummary {
  tables: Record<string, { chains: Record<string, ChainStats> }>;
  totalRules: number;
  kubeServicesRules: number;
  serviceChains: ChainCounter[];
}

const SERVICE_CHAIN = /^KUBE-(SVC|SEP|EXT|FW)-/;

export function parseIptablesSave(text: string): IptablesSummary {
  const tables: IptablesSummary['tables'] = {};
  let table: string | undefined;
  let totalRules = 0;
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const fail = (why: string) =>
      parseError('iptables-save', text, `line ${i + 1}: ${why}: ${JSON.stringify(line.slice(0, 120))}`);
    if (line.startsWith('*')) {
      if (table) throw fail('table opened before COMMIT');
      table = line.slice(1);
      tables[table] = { chains: {} };
      return;
    }
    if (!table) throw fail('content outside a table');
    const chains = (tables[table] as { chains: Record<string, ChainStats> }).chains;
    if (line === 'COMMIT') {
      table = undefined;
      return;
    }
    const decl = /^:(\S+) (\S+) \[(\d+):(\d+)\]$/.exec(line);
    if (decl) {
      chains[decl[1] as string] = { ...(decl[2] !== '-' ? { policy: decl[2] } : {}), rules: 0, packets: 0, bytes: 0 };
      return;
    }
    const rule = /^(?:\[(\d+):(\d+)\] )?-A (\S+)(?: |$)/.exec(line);
    if (!rule) throw fail('not a chain, rule or COMMIT line');
    const chain = chains[rule[3] as string];
    if (!chain) throw fail(`rule for undeclared chain ${rule[3]}`);
    chain.rules++;
    chain.packets += Number(rule[1] ?? 0);
    chain.bytes += Number(rule[2] ?? 0);
    totalRules++;
  });
  if (table) throw parseError('iptables-save', text, `table ${table} has no COMMIT (truncated output?)`);
  const nat = tables.nat?.chains ?? {};
  return {
    tables,
    totalRules,
    kubeServicesRules: nat['KUBE-SERVICES']?.rules ?? 0,
    serviceChains: Object.entries(nat)
      .filter(([name]) => SERVICE_CHAIN.test(name))
      .map(([chain, s]) => ({ chain, packets: s.packets, bytes: s.bytes })),
  };
}
