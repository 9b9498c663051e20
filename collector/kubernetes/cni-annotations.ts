/**
 * Which CNI runs, and in which mode, from the annotations the CNIs themselves
 * write on their Node objects. The collector lists nodes anyway (inventory.ts),
 * so this costs no request and no permission. Pure.
 *
 * The keys, as each CNI's own source spells them:
 * - flannel, pkg/subnet/kube/annotations.go (flannel-io/flannel): prefix +
 *   "backend-type" (vxlan, host-gw, wireguard, udp, ipip, ...), "kube-subnet-manager",
 *   "backend-data", "public-ip"; the prefix is the --kube-annotation-prefix
 *   flag, default "flannel.alpha.coreos.com" (main.go).
 * - Calico, libcalico-go/lib/backend/k8s/resources/node.go (projectcalico/calico):
 *   projectcalico.org/IPv4Address, IPv6Address, IPv4IPIPTunnelAddr,
 *   IPv4VXLANTunnelAddr, IPv6VXLANTunnelAddr, IPv4WireguardInterfaceAddr. A
 *   tunnel address exists on a node when an IP pool uses that encapsulation.
 * - Cilium, pkg/annotation/k8s.go (cilium/cilium): network.cilium.io/ipv4-cilium-host
 *   (CiliumHostIP), ipv4-pod-cidr (V4CIDRName), wg-pub-key, and their older
 *   aliases io.cilium.network.*. Cilium writes them only with
 *   --annotate-k8s-node, which current releases leave off (pkg/defaults), so
 *   its cilium-config ConfigMap (cilium-mode.ts) is the stronger sign.
 */
import type { V1Node } from '@kubernetes/client-node';
import { listValues, nodeCount } from './node-values.js';

export type CniName = 'calico' | 'cilium' | 'flannel';

export const FLANNEL_BACKEND_TYPE = 'flannel.alpha.coreos.com/backend-type';

const CALICO = {
  ipv4: 'projectcalico.org/IPv4Address',
  ipv6: 'projectcalico.org/IPv6Address',
  ipip: 'projectcalico.org/IPv4IPIPTunnelAddr',
  vxlan4: 'projectcalico.org/IPv4VXLANTunnelAddr',
  vxlan6: 'projectcalico.org/IPv6VXLANTunnelAddr',
  wireguard: 'projectcalico.org/IPv4WireguardInterfaceAddr',
} as const;

const CILIUM_KEYS = [
  'network.cilium.io/ipv4-cilium-host',
  'io.cilium.network.ipv4-cilium-host',
  'network.cilium.io/ipv4-pod-cidr',
  'io.cilium.network.ipv4-pod-cidr',
] as const;
const CILIUM_WIREGUARD = ['network.cilium.io/wg-pub-key', 'io.cilium.network.wg-pub-key'] as const;

/** One CNI's mark on one node: which CNI, its mode there ('' when the annotations do not say), the key that showed it. */
export interface CniSign {
  cni: CniName;
  mode: string;
  key: string;
}

function calicoSign(a: Record<string, string>): CniSign | undefined {
  const key = Object.values(CALICO).find((k) => a[k]);
  if (!key) return undefined;
  const tunnels = [a[CALICO.ipip] ? 'ipip' : '', a[CALICO.vxlan4] || a[CALICO.vxlan6] ? 'vxlan' : ''].filter(Boolean);
  const base = tunnels.length ? tunnels.join(' + ') : 'no tunnel address (unencapsulated)';
  const mode = a[CALICO.wireguard] ? `${base} + wireguard` : base;
  const shown = [CALICO.ipip, CALICO.vxlan4, CALICO.vxlan6].find((k) => a[k]) ?? key;
  return { cni: 'calico', mode, key: shown };
}

function ciliumSign(a: Record<string, string>): CniSign | undefined {
  const key = CILIUM_KEYS.find((k) => a[k]);
  if (!key) return undefined;
  return { cni: 'cilium', mode: CILIUM_WIREGUARD.some((k) => a[k]) ? 'wireguard' : '', key };
}

/** Pure: every CNI whose annotations this node carries. */
export function cniSignsOf(node: V1Node): CniSign[] {
  const a = node.metadata?.annotations ?? {};
  const flannel = a[FLANNEL_BACKEND_TYPE];
  return [
    ...(flannel ? [{ cni: 'flannel' as const, mode: flannel, key: FLANNEL_BACKEND_TYPE }] : []),
    ...[calicoSign(a), ciliumSign(a)].filter((s): s is CniSign => s !== undefined),
  ];
}

export interface CniFromNodes {
  /** e.g. "flannel", "calico + flannel"; undefined when no node carries a CNI annotation. */
  cni?: string;
  cniMode?: string;
  /** Per CNI, its mode(s) across nodes, for combining with cilium-config. */
  modes: Partial<Record<CniName, string>>;
  evidence: string[];
  notes: string[];
}

/**
 * Pure: the CNI(s) the nodes' annotations show, each with its mode(s) across
 * nodes (mixed modes are listed with their node counts). Nodes carrying no
 * annotation while others do are named in a note, not ignored.
 */
export function cniFromNodes(nodes: readonly V1Node[]): CniFromNodes {
  const signs = nodes.map(cniSignsOf);
  const found = [...new Set(signs.flat().map((s) => s.cni))].sort();
  const out: CniFromNodes = { modes: {}, evidence: [], notes: [] };
  if (!found.length) return out;
  for (const cni of found) {
    const mine = signs.flat().filter((s) => s.cni === cni);
    out.modes[cni] = listValues(mine.map((s) => s.mode));
    const keys = [...new Set(mine.map((s) => s.key))].join(', ');
    out.evidence.push(`${cni}: node annotation ${keys} on ${nodeCount(mine.length)} of ${nodes.length}`);
  }
  const bare = nodes.filter((_, i) => signs[i]!.length === 0).map((n) => n.metadata?.name ?? '?');
  if (bare.length)
    out.notes.push(
      `${nodeCount(bare.length)} ${bare.length === 1 ? 'carries' : 'carry'} no CNI annotation: ${bare.slice(0, 5).join(', ')}${bare.length > 5 ? ', ...' : ''}`,
    );
  if (found.length > 1)
    out.notes.push(
      `nodes carry the annotations of several CNIs (${found.join(', ')}): e.g. Canal (flannel networking, Calico policy) or a migration`,
    );
  out.cni = found.join(' + ');
  const modes = found
    .filter((c) => out.modes[c])
    .map((c) => (found.length > 1 ? `${c}: ${out.modes[c]}` : out.modes[c]!));
  if (modes.length) out.cniMode = modes.join('; ');
  return out;
}
