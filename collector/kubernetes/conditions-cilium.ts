/**
 * What a cluster's Cilium configuration says of the conditions the collector
 * does not put in place itself (Hubble without the operator's opt-in, L7
 * policy, encryption), as the sentence a refused phase shows: read from
 * cilium-config, never assumed. Pure.
 */

/** Pure: the exact commands that turn Hubble on in `ns` (what the opt-in would let the collector do). */
export function hubbleCommand(ns: string): string {
  return `kubectl -n ${ns} patch configmap cilium-config --type merge -p '{"data":{"enable-hubble":"true"}}' && kubectl -n ${ns} rollout restart daemonset/cilium && kubectl -n ${ns} rollout status daemonset/cilium`;
}

const on = (v: string | undefined): boolean => v === 'true';

/** Pure: why the Hubble condition is refused, given cilium-config (undefined: none in `ns`) and the opt-in. */
export function hubbleRefusal(config: Record<string, string> | undefined, ns: string, allowChange: boolean): string {
  if (!config) return `Hubble is part of Cilium, and this cluster has no cilium-config in ${ns}: no Cilium to measure`;
  const state = `cilium-config in ${ns} has enable-hubble=${config['enable-hubble'] ?? '(unset)'}`;
  if (!allowChange)
    return `Hubble on against off needs cilium-config changed and Cilium restarted, which this collector may not do (chart value rbac.ciliumConfig.write=false); ${state}. To allow it: helm upgrade with --set rbac.ciliumConfig.write=true; to do it yourself: ${hubbleCommand(ns)}`;
  return `${state}; with rbac.ciliumConfig.write the collector sets it and verifies it through the agents (conditions-hubble.ts)`;
}

/** Pure: why L7 policy cannot be measured here. */
export function l7Refusal(config: Record<string, string> | undefined, ns: string): string {
  if (!config) return `L7 policy is a Cilium feature, and this cluster has no cilium-config in ${ns}`;
  if (config['enable-l7-proxy'] === 'false')
    return `cilium-config in ${ns} has enable-l7-proxy=false: Cilium's Envoy proxy is off, so an HTTP rule cannot be enforced`;
  return `cilium-config in ${ns} has enable-l7-proxy=${config['enable-l7-proxy'] ?? '(unset: on)'}; the collector creates an HTTP rule and verifies it (a non-2xx from the proxy on a denied path, 2xx on the allowed one) only with the chart value rbac.ciliumNetworkPolicy.enabled=true`;
}

/** Pure: what encryption the cluster runs, and why on against off is not measured. */
export function encryptionRefusal(config: Record<string, string> | undefined, ns: string): string {
  if (!config) return `transparent encryption is a Cilium feature here, and this cluster has no cilium-config in ${ns}`;
  const mode = on(config['enable-wireguard']) ? 'WireGuard' : on(config['enable-ipsec']) ? 'IPsec' : 'none';
  return `cilium-config in ${ns} has encryption ${mode} (enable-wireguard=${config['enable-wireguard'] ?? '(unset)'}, enable-ipsec=${config['enable-ipsec'] ?? '(unset)'}); turning encryption on or off re-keys every node and drops connections, which the collector never does to a cluster: compare a run on a cluster with it against one without (cni-bench compare)`;
}
