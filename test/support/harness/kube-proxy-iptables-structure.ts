/**
 * The rule structure of an `iptables-save` dump (no counters), for comparing
 * what the real kube-proxy writes with what the lab's emulation writes. Both
 * dumps come from the same iptables-save, so rule text is already canonical
 * (match order, mark syntax, probability rounding); what is normalized here is
 * only what differs for a reason that does not change packet handling, each
 * listed with that reason in IPTABLES_NORMALIZATIONS. Pure.
 */

/** table -> chain -> rules in order, each rule the text after `-A <chain> `. */
export type IptablesTables = Record<string, Record<string, string[]>>;

export function parseSave(text: string): IptablesTables {
  const tables: IptablesTables = {};
  let table: Record<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    if (line.startsWith('*')) tables[line.slice(1)] = table = {};
    else if (line === 'COMMIT') table = undefined;
    else if (!table) throw new Error(`iptables-save: content outside a table: ${line}`);
    else if (line.startsWith(':')) table[line.slice(1).split(' ')[0] as string] = [];
    else {
      const m = /^-A (\S+) (.*)$/.exec(line);
      const rules = m ? table[m[1] as string] : undefined;
      if (!m || !rules) throw new Error(`iptables-save: not a rule of a declared chain: ${line}`);
      rules.push(m[2] as string);
    }
  }
  return tables;
}

/** What is normalized away before two rulesets are compared whole, and why it does not change packet handling. */
export const IPTABLES_NORMALIZATIONS = [
  "chain KUBE-PROXY-CANARY (mangle, nat, filter; real only): kube-proxy's flush monitor, empty and never jumped to",
  "chain KUBE-IPTABLES-HINT (mangle; emulation only): kubelet's backend hint, which the lab writes in kubelet's place; empty and never jumped to",
  '"-m nfacct --nfacct-name <counter>" (real only, KUBE-FORWARD INVALID rule): an accounting match reached only by packets already matched INVALID and dropped',
  "rules for Services other than the compared ones (the harness apiserver's own default/kubernetes, which has no endpoints: a REJECT in filter KUBE-SERVICES)",
  'order of the per-Service rules in nat KUBE-SERVICES (the nodeports rule stays last): kube-proxy writes them in Go map order, which is random per sync',
] as const;

const IGNORED_CHAINS: Record<string, string[]> = {
  mangle: ['KUBE-PROXY-CANARY', 'KUBE-IPTABLES-HINT'],
  nat: ['KUBE-PROXY-CANARY'],
  filter: ['KUBE-PROXY-CANARY'],
};
const NFACCT = / -m nfacct --nfacct-name +\S+/;
const NODEPORTS_RULE = /kubernetes service nodeports; NOTE: this must be the last rule/;

/** True when IPv4 `ip` is inside `cidr`. */
export function ipInCidr(ip: string, cidr: string): boolean {
  const [base, len] = cidr.split('/');
  const n = (a: string): number => a.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
  const size = 2 ** (32 - Number(len));
  return Math.floor(n(ip) / size) === Math.floor(n(base as string) / size);
}

/** True for a rule about a ClusterIP in the Service range that is not one of `ours`. */
function aboutOtherService(rule: string, ours: ReadonlySet<string>, serviceCidr: string): boolean {
  const d = / -d (\d+\.\d+\.\d+\.\d+)\/32 /.exec(` ${rule} `)?.[1];
  return d !== undefined && ipInCidr(d, serviceCidr) && !ours.has(d);
}

/** The ruleset with IPTABLES_NORMALIZATIONS applied. */
export function normalizeTables(t: IptablesTables, clusterIps: readonly string[], serviceCidr: string): IptablesTables {
  const ours = new Set(clusterIps);
  const out: IptablesTables = {};
  for (const [table, chains] of Object.entries(t)) {
    out[table] = {};
    for (const [chain, rules] of Object.entries(chains)) {
      if (IGNORED_CHAINS[table]?.includes(chain)) continue;
      let kept = rules.map((r) => r.replace(NFACCT, '')).filter((r) => !aboutOtherService(r, ours, serviceCidr));
      if (table === 'nat' && chain === 'KUBE-SERVICES') {
        kept = [...kept.filter((r) => !NODEPORTS_RULE.test(r)).sort(), ...kept.filter((r) => NODEPORTS_RULE.test(r))];
      }
      (out[table] as Record<string, string[]>)[chain] = kept;
    }
  }
  return out;
}

/** The per-Service part: KUBE-SERVICES rules for `clusterIps` and the KUBE-SVC / KUBE-SEP chains they lead to. */
export interface IptablesServiceView {
  kubeServices: string[];
  svc: Record<string, string[]>;
  sep: Record<string, string[]>;
}

export function serviceView(t: IptablesTables, clusterIps: readonly string[]): IptablesServiceView {
  const nat = t.nat ?? {};
  const ours = new Set(clusterIps);
  const kubeServices = (nat['KUBE-SERVICES'] ?? []).filter((r) => ours.has(/-d (\S+)\/32 /.exec(r)?.[1] ?? '')).sort();
  const jumpTargets = (rules: string[], prefix: string): string[] =>
    rules.map((r) => / -j (\S+)$/.exec(r)?.[1] ?? '').filter((c) => c.startsWith(prefix));
  const svc: Record<string, string[]> = {};
  const sep: Record<string, string[]> = {};
  for (const s of jumpTargets(kubeServices, 'KUBE-SVC-')) {
    svc[s] = nat[s] ?? [];
    for (const e of jumpTargets(svc[s], 'KUBE-SEP-')) sep[e] = nat[e] ?? [];
  }
  return { kubeServices, svc, sep };
}

/** `table/chain` names in `a` but not in `b`. */
export function chainsOnlyIn(a: IptablesTables, b: IptablesTables): string[] {
  return Object.entries(a).flatMap(([table, chains]) =>
    Object.keys(chains)
      .filter((c) => !(c in (b[table] ?? {})))
      .map((c) => `${table}/${c}`),
  );
}

/** `table/chain` names present in both whose rules differ. */
export function chainsDiffering(a: IptablesTables, b: IptablesTables): string[] {
  return Object.entries(a).flatMap(([table, chains]) =>
    Object.entries(chains)
      .filter(([c, rules]) => {
        const other = b[table]?.[c];
        return other !== undefined && JSON.stringify(other) !== JSON.stringify(rules);
      })
      .map(([c]) => `${table}/${c}`),
  );
}
