/**
 * What the real kube-proxy programmed for one Service port, read back from a
 * node's ruleset: the lab's kube-proxy dataplanes count a Service as there only
 * once every node's rules send its ClusterIP:port to exactly its endpoints.
 * Pure, tested on rules the real kube-proxy v1.37 wrote
 * (test/fixtures/kube-proxy-real/).
 */
import type { ServiceEndpoint } from '../../core/service-frontend.js';
import type { KubeProxyMode } from './kube-proxy.js';

/** The command that dumps what `rulesEndpoints` reads, per mode (run inside the node's namespace). */
export function rulesDumpCommand(mode: KubeProxyMode): [string, string[]] {
  return mode === 'iptables' ? ['iptables-save', ['-t', 'nat']] : ['nft', ['list', 'table', 'ip', 'kube-proxy']];
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * Pure: the endpoints (ip:port, sorted) iptables mode sends tcp ip:port to:
 * KUBE-SERVICES' rule for it jumps to a KUBE-SVC chain, whose rules jump to
 * KUBE-SEP chains, each DNATing to one endpoint. Read from the DNAT targets,
 * not the comments: above 1,000 endpoints kube-proxy drops its comments
 * (its large-cluster mode). Undefined when KUBE-SERVICES has no such rule (a
 * Service without endpoints gets a REJECT there instead).
 */
export function iptablesServiceEndpoints(save: string, ip: string, port: number): string[] | undefined {
  const svc = new RegExp(
    `^(?:\\[\\d+:\\d+\\] )?-A KUBE-SERVICES -d ${escapeRe(ip)}/32 -p tcp .*--dport ${port} -j (KUBE-SVC-[A-Z0-9]+)$`,
    'm',
  ).exec(save);
  const chain = svc?.[1];
  if (!chain) return undefined;
  const seps = [...save.matchAll(new RegExp(`^(?:\\[\\d+:\\d+\\] )?-A ${chain} .*-j (KUBE-SEP-[A-Z0-9]+)$`, 'gm'))];
  return seps
    .map(
      (m) =>
        new RegExp(`^(?:\\[\\d+:\\d+\\] )?-A ${m[1]} .*-j DNAT --to-destination (\\S+)$`, 'm').exec(save)?.[1] ??
        `${m[1]} (no DNAT)`,
    )
    .sort();
}

/**
 * Pure: the same for nftables mode (`nft list table ip kube-proxy`): the
 * service-ips map's element for ip . tcp . port names a service chain whose
 * one rule DNATs to one endpoint or to `numgen random mod N map { i : ip . port }`.
 */
export function nftServiceEndpoints(table: string, ip: string, port: number): string[] | undefined {
  const element = new RegExp(`(?:^|[{,\\s])${escapeRe(ip)} \\. tcp \\. ${port} : goto (service-[^\\s,}]+)`).exec(table);
  const chain = element?.[1];
  if (!chain) return undefined;
  const body = new RegExp(`\\n\\s*chain ${escapeRe(chain)} \\{\\n([\\s\\S]*?)\\n\\s*\\}`).exec(table)?.[1];
  if (body === undefined) return undefined;
  const single = /dnat to (\d+\.\d+\.\d+\.\d+:\d+)/.exec(body);
  if (single) return [single[1] as string];
  return [...body.matchAll(/\d+ : (\d+\.\d+\.\d+\.\d+) \. (\d+)/g)].map((m) => `${m[1]}:${m[2]}`).sort();
}

/** Pure: the endpoints `mode`'s dump sends ip:port to (undefined: the Service is not there). */
export function rulesEndpoints(mode: KubeProxyMode, dump: string, ip: string, port: number): string[] | undefined {
  return mode === 'iptables' ? iptablesServiceEndpoints(dump, ip, port) : nftServiceEndpoints(dump, ip, port);
}

/** Pure: does the dump send ip:port to exactly `endpoints`? */
export function programmedAs(
  mode: KubeProxyMode,
  dump: string,
  ip: string,
  port: number,
  endpoints: readonly ServiceEndpoint[],
): boolean {
  const have = rulesEndpoints(mode, dump, ip, port);
  if (!have) return false;
  const want = endpoints.map((e) => `${e.ip}:${e.port}`).sort();
  return have.length === want.length && have.every((x, i) => x === want[i]);
}
