/**
 * Renders Services as iptables-restore input in kube-proxy's iptables-mode
 * layout (pkg/proxy/iptables/proxier.go; test/integration/k8s-kube-proxy.test.ts
 * compares it with what the real v1.37.2 writes): PREROUTING and OUTPUT jump to
 * KUBE-SERVICES; one rule per service port there jumps to KUBE-SVC-<hash>, which
 * marks off-cluster sources for masquerade and picks an endpoint chain
 * KUBE-SEP-<hash> with `statistic --mode random` probabilities 1/n, 1/(n-1), ...;
 * each KUBE-SEP DNATs to its endpoint. Chain hashes follow kube-proxy: base32 of
 * SHA-256 over "namespace/name:port" + protocol (+ endpoint), first 16 chars.
 * Pure: the lab pipes the text to iptables-restore --noflush in a node namespace.
 */
import { createHash } from 'node:crypto';

export interface LabService {
  namespace: string;
  name: string;
  portName: string;
  clusterIp: string;
  port: number;
  protocol: 'tcp';
  endpoints: { ip: string; port: number }[];
}

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 with padding, as Go's base32.StdEncoding. */
export function base32(buf: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  while (out.length % 8) out += '=';
  return out;
}

function hash16(text: string): string {
  return base32(createHash('sha256').update(text).digest()).slice(0, 16);
}

export function servicePortName(s: LabService): string {
  return `${s.namespace}/${s.name}${s.portName ? `:${s.portName}` : ''}`;
}

export function svcChain(s: LabService): string {
  return `KUBE-SVC-${hash16(servicePortName(s) + s.protocol)}`;
}

export function sepChain(s: LabService, ep: { ip: string; port: number }): string {
  return `KUBE-SEP-${hash16(`${servicePortName(s)}${s.protocol}${ep.ip}:${ep.port}`)}`;
}

/**
 * Chains and hooks that exist once per node, as kube-proxy creates them at
 * start, and kubelet's KUBE-IPTABLES-HINT chain in mangle that tells readers
 * (kube-proxy's image, cni-bench's agent) which iptables backend the node uses.
 * The filter table matters per packet, not just per connection: every
 * forwarded packet passes KUBE-FORWARD (established ones are accepted there),
 * every packet checks its conntrack state on the way to the NEW-only chains,
 * and INPUT/OUTPUT pass KUBE-FIREWALL (kubelet's and kube-proxy's localnet
 * guard). KUBE-FORWARD's INVALID rule is kube-proxy's without its nfacct
 * counter match (only packets already judged INVALID reach that match, and
 * the counter object cannot be made with iptables-restore).
 */
export function renderBase(): string {
  return [
    '*mangle',
    ':KUBE-IPTABLES-HINT - [0:0]',
    'COMMIT',
    '*filter',
    ':KUBE-EXTERNAL-SERVICES - [0:0]',
    ':KUBE-FIREWALL - [0:0]',
    ':KUBE-FORWARD - [0:0]',
    ':KUBE-NODEPORTS - [0:0]',
    ':KUBE-PROXY-FIREWALL - [0:0]',
    ':KUBE-SERVICES - [0:0]',
    '-A INPUT -j KUBE-FIREWALL',
    '-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL',
    '-A INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS',
    '-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
    '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL',
    '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
    '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
    '-A OUTPUT -j KUBE-FIREWALL',
    '-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL',
    '-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP',
    '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT',
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
    'COMMIT',
    '*nat',
    ':KUBE-SERVICES - [0:0]',
    ':KUBE-NODEPORTS - [0:0]',
    ':KUBE-POSTROUTING - [0:0]',
    ':KUBE-MARK-MASQ - [0:0]',
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
    '-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000',
    '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
    '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
    '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
    'COMMIT',
    '',
  ].join('\n');
}

function clusterIpMatch(s: LabService): string {
  return `-d ${s.clusterIp}/32 -p ${s.protocol} -m comment --comment "${servicePortName(s)} cluster IP" -m ${s.protocol} --dport ${s.port}`;
}

/** A Service's own chain and its endpoint chains: declarations and rules, as kube-proxy writes them. */
function serviceBody(s: LabService, clusterCidr: string, decl: string[], rules: string[]): void {
  const svc = svcChain(s);
  rules.push(`-A ${svc} ! -s ${clusterCidr} ${clusterIpMatch(s)} -j KUBE-MARK-MASQ`);
  const n = s.endpoints.length;
  s.endpoints.forEach((ep, i) => {
    const sep = sepChain(s, ep);
    const comment = `-m comment --comment "${servicePortName(s)} -> ${ep.ip}:${ep.port}"`;
    const remaining = n - i;
    // kube-proxy formats 1/n with %0.10f.
    const pick = remaining > 1 ? ` -m statistic --mode random --probability ${(1 / remaining).toFixed(10)}` : '';
    rules.push(`-A ${svc} ${comment}${pick} -j ${sep}`);
    decl.push(`:${sep} - [0:0]`);
    rules.push(`-A ${sep} -s ${ep.ip}/32 -m comment --comment "${servicePortName(s)}" -j KUBE-MARK-MASQ`);
    rules.push(
      `-A ${sep} -p ${s.protocol} -m comment --comment "${servicePortName(s)}" -m ${s.protocol} -j DNAT --to-destination ${ep.ip}:${ep.port}`,
    );
  });
}

/** Lines (inside a *nat table) that add Services; the KUBE-SERVICES rules go in front of the nodeports rule. */
export function renderServicesAdd(services: readonly LabService[], clusterCidr: string): string {
  const decl: string[] = [];
  const rules: string[] = [];
  for (const s of services) {
    const svc = svcChain(s);
    decl.push(`:${svc} - [0:0]`);
    rules.push(`-I KUBE-SERVICES 1 ${clusterIpMatch(s)} -j ${svc}`);
    serviceBody(s, clusterCidr, decl, rules);
  }
  return ['*nat', ...decl, ...rules, 'COMMIT', ''].join('\n');
}

/**
 * One transaction that gives an existing Service port new endpoints, as
 * kube-proxy's sync does after an EndpointSlice change: its KUBE-SVC chain
 * declared again (iptables-restore --noflush flushes a declared chain) and
 * filled with the new endpoints, endpoint chains no longer used flushed and
 * deleted; its KUBE-SERVICES rule stays. Atomic: no packet sees the Service
 * without endpoints.
 */
export function renderEndpointsChange(before: LabService, after: LabService, clusterCidr: string): string {
  const decl = [`:${svcChain(after)} - [0:0]`];
  const rules: string[] = [];
  serviceBody(after, clusterCidr, decl, rules);
  const kept = new Set(after.endpoints.map((ep) => sepChain(after, ep)));
  const gone = before.endpoints.map((ep) => sepChain(before, ep)).filter((c) => !kept.has(c));
  return ['*nat', ...decl, ...rules, ...gone.map((c) => `-F ${c}`), ...gone.map((c) => `-X ${c}`), 'COMMIT', ''].join(
    '\n',
  );
}

/** Lines that remove Services: their KUBE-SERVICES rule, then their chains. */
export function renderServicesDelete(services: readonly LabService[]): string {
  const lines: string[] = ['*nat'];
  const chains: string[] = [];
  for (const s of services) {
    const svc = svcChain(s);
    lines.push(`-D KUBE-SERVICES ${clusterIpMatch(s)} -j ${svc}`);
    chains.push(svc, ...s.endpoints.map((ep) => sepChain(s, ep)));
  }
  for (const c of chains) lines.push(`-F ${c}`);
  for (const c of chains) lines.push(`-X ${c}`);
  return [...lines, 'COMMIT', ''].join('\n');
}
