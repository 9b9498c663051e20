/**
 * Renders Services as `nft -f` input in kube-proxy's nftables-mode layout as of
 * Kubernetes 1.37 (pkg/proxy/nftables/proxier.go and the expected rulesets in
 * its proxier_test.go; test/integration/k8s-kube-proxy.test.ts compares it with
 * what the real v1.37.2 writes): table `ip kube-proxy`; the `services` chain
 * marks off-cluster sources to ClusterIPs for masquerade once, then dispatches
 * through the `service-ips` verdict map (ClusterIP . protocol . port : goto
 * service chain); each service chain is one rule that DNATs, to its single
 * endpoint or through `numgen random mod N map` to one of N. There are no
 * per-endpoint chains (kube-proxy creates them only for session affinity);
 * hairpin traffic is masqueraded through the `hairpin-connections` set.
 * Chain names are kube-proxy's: prefix, the first 8 characters of base32(SHA-256)
 * of the name, '-', the name. Only ClusterIP Services (TCP) with endpoints.
 * Pure; objects are emitted in dependency order (chains, then rules, then map
 * elements) because nft loads a file in order.
 */
import { createHash } from 'node:crypto';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { base32, type LabService, servicePortName } from './kube-proxy-iptables.js';
import { CLUSTER_CIDR } from './plan.js';

export const NFT_TABLE = 'kube-proxy';
const T = `ip ${NFT_TABLE}`;
/** Longest name part after a chain prefix before kube-proxy truncates it (knftables NameLengthMax 256 - 16). */
const NAME_BASE_MAX = 240;

function hashAndTruncate(name: string): string {
  const full = `${base32(createHash('sha256').update(name).digest()).slice(0, 8)}-${name}`;
  return full.length > NAME_BASE_MAX ? `${full.slice(0, NAME_BASE_MAX - 3)}...` : full;
}

function portBase(s: LabService): string {
  return `${s.namespace}/${s.name}/${s.protocol}/${s.portName}`;
}

export function nftServiceChain(s: LabService): string {
  return `service-${hashAndTruncate(portBase(s))}`;
}

/** kube-proxy's per-endpoint chain name; it creates these only for session-affinity Services, which the lab does not render. */
export function nftEndpointChain(s: LabService, ep: { ip: string; port: number }): string {
  return `endpoint-${hashAndTruncate(`${portBase(s)}__${ep.ip}/${ep.port}`)}`;
}

/**
 * What kube-proxy creates at start on a node: base chains hooked at kube-proxy's
 * priorities, the sets and maps, and their fixed rules. `nodeIp` fills
 * nodeport-ips (kube-proxy's default --nodeport-addresses=primary);
 * `clusterCidr` (--cluster-cidr, default the lab's pod range) decides which
 * sources to ClusterIPs are masqueraded. hairpin-connections stays empty: the
 * lab's Services do not say which endpoints are local to a node, and the set is
 * looked up the same way whether it has elements or not.
 */
export function renderNftBase(opts: { serviceCidr: string; nodeIp: string; clusterCidr?: string }): string {
  return [
    `add table ${T} { comment "rules for kube-proxy" ; }`,
    `add set ${T} cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }`,
    `add set ${T} nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }`,
    `add set ${T} hairpin-connections { type ipv4_addr . ipv4_addr . inet_proto . inet_service ; comment "service hairpin connections" ; }`,
    `add map ${T} firewall-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }`,
    `add map ${T} no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }`,
    `add map ${T} no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }`,
    `add map ${T} service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }`,
    `add map ${T} service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }`,
    `add chain ${T} cluster-ips-check`,
    `add chain ${T} filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }`,
    `add chain ${T} filter-output-pre-dnat { type filter hook output priority -110 ; }`,
    `add chain ${T} filter-forward { type filter hook forward priority 0 ; }`,
    `add chain ${T} filter-input { type filter hook input priority 0 ; }`,
    `add chain ${T} filter-output { type filter hook output priority 0 ; }`,
    `add chain ${T} firewall-check`,
    `add chain ${T} masquerading`,
    `add chain ${T} nat-output { type nat hook output priority -100 ; }`,
    `add chain ${T} nat-postrouting { type nat hook postrouting priority 100 ; }`,
    `add chain ${T} nat-prerouting { type nat hook prerouting priority -100 ; }`,
    `add chain ${T} nodeport-endpoints-check`,
    `add chain ${T} reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }`,
    `add chain ${T} services`,
    `add chain ${T} service-endpoints-check`,
    `add rule ${T} cluster-ips-check ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"`,
    `add rule ${T} cluster-ips-check ip daddr { ${opts.serviceCidr} } drop comment "Drop traffic to unallocated ClusterIPs"`,
    `add rule ${T} filter-prerouting-pre-dnat ct state new jump firewall-check`,
    `add rule ${T} filter-forward ct state new jump service-endpoints-check`,
    `add rule ${T} filter-forward ct state new jump cluster-ips-check`,
    `add rule ${T} filter-input ct state new jump nodeport-endpoints-check`,
    `add rule ${T} filter-input ct state new jump service-endpoints-check`,
    `add rule ${T} filter-output ct state new jump service-endpoints-check`,
    `add rule ${T} filter-output-pre-dnat ct state new jump firewall-check`,
    `add rule ${T} filter-output ct state new jump cluster-ips-check`,
    `add rule ${T} firewall-check ip daddr . meta l4proto . th dport vmap @firewall-ips`,
    `add rule ${T} masquerading mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random`,
    `add rule ${T} masquerading ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random`,
    `add rule ${T} nat-output jump services`,
    `add rule ${T} nat-postrouting jump masquerading`,
    `add rule ${T} nat-prerouting jump services`,
    `add rule ${T} nodeport-endpoints-check ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports`,
    `add rule ${T} reject-chain reject`,
    `add rule ${T} services ip daddr @cluster-ips ip saddr != ${opts.clusterCidr ?? CLUSTER_CIDR} mark set mark or 0x4000 comment "masquerade clusterIP traffic from outside cluster"`,
    `add rule ${T} services ip daddr . meta l4proto . th dport vmap @service-ips`,
    `add rule ${T} services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports`,
    `add rule ${T} service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services`,
    `add element ${T} nodeport-ips { ${opts.nodeIp} }`,
    '',
  ].join('\n');
}

/** The service chain's one rule: DNAT to the only endpoint, or to one of N picked by numgen. */
function dnatRule(s: LabService): string {
  const [only] = s.endpoints;
  if (s.endpoints.length === 1 && only) return `meta l4proto ${s.protocol} dnat to ${only.ip}:${only.port}`;
  const map = s.endpoints.map((ep, i) => `${i} : ${ep.ip} . ${ep.port}`).join(' , ');
  return `meta l4proto ${s.protocol} dnat ip addr . port to numgen random mod ${s.endpoints.length} map { ${map} }`;
}

/**
 * Adds Services with at least one endpoint: their chains, rules, and cluster-ips /
 * service-ips elements. The off-cluster masquerade check is in the base
 * `services` chain (renderNftBase), so `_clusterCidr` is not used any more; it
 * stays for existing callers.
 */
export function renderNftServicesAdd(services: readonly LabService[], _clusterCidr?: string): string {
  const chains: string[] = [];
  const rules: string[] = [];
  const elements: string[] = [];
  for (const s of services) {
    if (s.endpoints.length === 0)
      throw new CniBenchError(
        ErrorCodes.LAB,
        `lab nftables: Service ${servicePortName(s)} has no endpoints; kube-proxy would reject its traffic, which the lab does not render`,
      );
    const svc = nftServiceChain(s);
    chains.push(`add chain ${T} ${svc}`);
    rules.push(`add rule ${T} ${svc} ${dnatRule(s)}`);
    elements.push(`add element ${T} cluster-ips { ${s.clusterIp} }`);
    elements.push(`add element ${T} service-ips { ${s.clusterIp} . ${s.protocol} . ${s.port} : goto ${svc} }`);
  }
  return [...chains, ...rules, ...elements, ''].join('\n');
}

/** Removes Services: map elements first (nothing points at the chains then), then their chains. */
export function renderNftServicesDelete(services: readonly LabService[]): string {
  const lines: string[] = [];
  for (const s of services) {
    lines.push(`delete element ${T} service-ips { ${s.clusterIp} . ${s.protocol} . ${s.port} }`);
    lines.push(`delete element ${T} cluster-ips { ${s.clusterIp} }`);
  }
  for (const s of services) {
    lines.push(`flush chain ${T} ${nftServiceChain(s)}`, `delete chain ${T} ${nftServiceChain(s)}`);
  }
  return `${lines.join('\n')}\n`;
}
