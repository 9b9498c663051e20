/**
 * Cilium's datapath mode and whether it replaces kube-proxy, from its
 * cilium-config ConfigMap (already read for the LB-map preflight). Pure.
 *
 * Keys and defaults as Cilium's source has them:
 * - "routing-mode": "native" | "tunnel" (pkg/option/config.go RoutingMode,
 *   RoutingModeNative/RoutingModeTunnel); default "tunnel" (pkg/defaults).
 * - "tunnel-protocol": "vxlan" | "geneve" (pkg/datapath/tunnel/tunnel.go);
 *   default "vxlan" (pkg/defaults TunnelProtocol).
 * - "tunnel": "vxlan" | "geneve" | "disabled", the key before routing-mode
 *   (Cilium 1.13 and older; pkg/option/config.go TunnelVXLAN/TunnelGeneve/
 *   TunnelDisabled). cilium-cli reads the two the same way
 *   (clustermesh/clustermesh.go, extractAccessInformation).
 * - "kube-proxy-replacement": "true" | "false" (1.14 and later,
 *   KubeProxyReplacementTrue/False, default "false"), formerly "strict",
 *   "partial", "probe", "disabled".
 * - "enable-wireguard", "enable-ipsec": transparent encryption.
 */

export interface CiliumMode {
  /** e.g. "native routing", "vxlan tunnel", "geneve tunnel + wireguard". */
  cniMode: string;
  /** True when Cilium handles Services itself and kube-proxy should not run. */
  replacesKubeProxy: boolean;
  evidence: string[];
  notes: string[];
}

const TUNNELS = new Set(['vxlan', 'geneve']);

function routing(
  data: Readonly<Record<string, string>>,
  where: string,
  notes: string[],
): { mode: string; evidence: string } {
  const rm = data['routing-mode'];
  const legacy = data.tunnel;
  if (rm === 'native') return { mode: 'native routing', evidence: `${where} routing-mode=native` };
  if (rm === 'tunnel') {
    const proto = data['tunnel-protocol'];
    if (proto !== undefined && !TUNNELS.has(proto))
      notes.push(`${where}: tunnel-protocol '${proto}' is neither vxlan nor geneve`);
    return {
      mode: `${proto || 'vxlan'} tunnel`,
      evidence: `${where} routing-mode=tunnel, tunnel-protocol=${proto ?? "unset (Cilium's default vxlan)"}`,
    };
  }
  if (rm !== undefined) {
    notes.push(`${where}: routing-mode '${rm}' is not one Cilium documents (native, tunnel)`);
    return { mode: rm, evidence: `${where} routing-mode=${rm}` };
  }
  if (legacy === 'disabled')
    return { mode: 'native routing', evidence: `${where} tunnel=disabled (Cilium 1.13 and older)` };
  if (legacy !== undefined) {
    if (!TUNNELS.has(legacy)) notes.push(`${where}: tunnel '${legacy}' is not one of vxlan, geneve, disabled`);
    return { mode: `${legacy} tunnel`, evidence: `${where} tunnel=${legacy} (Cilium 1.13 and older)` };
  }
  return {
    mode: 'vxlan tunnel',
    evidence: `${where}: neither routing-mode nor tunnel set (Cilium's default: tunnel, vxlan)`,
  };
}

function replacement(
  data: Readonly<Record<string, string>>,
  where: string,
  notes: string[],
): { replaces: boolean; evidence: string } {
  const kpr = data['kube-proxy-replacement'];
  if (kpr === undefined)
    return { replaces: false, evidence: `${where}: kube-proxy-replacement unset (Cilium's default false)` };
  const evidence = `${where} kube-proxy-replacement=${kpr}`;
  if (kpr === 'true' || kpr === 'strict') return { replaces: true, evidence };
  if (kpr === 'partial' || kpr === 'probe')
    notes.push(
      `${where}: kube-proxy-replacement=${kpr} replaces only part of kube-proxy; kube-proxy may still program Services`,
    );
  else if (kpr !== 'false' && kpr !== 'disabled')
    notes.push(`${where}: kube-proxy-replacement '${kpr}' is not a value Cilium documents`);
  return { replaces: false, evidence };
}

/** Pure: Cilium's mode from cilium-config's data; `where` names the ConfigMap ("kube-system/cilium-config"). */
export function ciliumModeOf(data: Readonly<Record<string, string>>, where: string): CiliumMode {
  const notes: string[] = [];
  const r = routing(data, where, notes);
  const k = replacement(data, where, notes);
  const encryption = [
    data['enable-wireguard'] === 'true' ? 'wireguard' : '',
    data['enable-ipsec'] === 'true' ? 'ipsec' : '',
  ].filter(Boolean);
  const evidence = [r.evidence, k.evidence, ...encryption.map((e) => `${where} enable-${e}=true`)];
  return { cniMode: [r.mode, ...encryption].join(' + '), replacesKubeProxy: k.replaces, evidence, notes };
}
