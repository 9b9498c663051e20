/**
 * What the lab tells Cilium, as data: the cilium-config ConfigMap a Cilium
 * install creates in kube-system, and which every lab agent reads as its
 * --config-dir (one file per key, as the DaemonSet mounts the ConfigMap), so
 * what the collector detects from the apiserver is exactly what the agents
 * run with. Pure. Flag names and defaults: Cilium v1.20.2 (see
 * /work/shared/cilium-notes.md and pkg/option/config.go).
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

export const CILIUM_DATAPLANES = ['cilium', 'cilium-vxlan'] as const;
export type CiliumDataplane = (typeof CILIUM_DATAPLANES)[number];

export const CILIUM_NAMESPACE = 'kube-system';
export const CILIUM_CONFIGMAP = 'cilium-config';

/** In-namespace paths every lab agent uses (its mount namespace has a private /run). */
export const AGENT_RUN = '/run/cilium';
export const AGENT_CGROUP_ROOT = '/run/cilium/cgroupv2';
/** The node's own files, bound into the agent's /run (see agent.ts). */
export const AGENT_NODE_DIR = '/run/cni-bench-node';

export interface CiliumLabConfig {
  dataplane: CiliumDataplane;
  clusterCidr: string;
  /** Lab id: the cluster name, so two labs' objects can never be mistaken for each other. */
  labId: string;
  /** bpf-lb-map-max (Cilium's default 65536 when absent). */
  lbMapMax?: number;
}

/** Pure: cilium-config's data for a lab dataplane. */
export function ciliumConfigData(c: CiliumLabConfig): Record<string, string> {
  if (!(CILIUM_DATAPLANES as readonly string[]).includes(c.dataplane)) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `dataplane: must be one of ${CILIUM_DATAPLANES.join(', ')}, got '${c.dataplane}'`,
      { details: { field: 'dataplane' } },
    );
  }
  const native = c.dataplane === 'cilium';
  return {
    'cluster-name': `cni-bench-lab-${c.labId}`,
    // No operator and no kvstore: identities as CRDs, pod CIDRs from Node.spec.podCIDRs (kube-controller-manager).
    'identity-allocation-mode': 'crd',
    ipam: 'kubernetes',
    'k8s-require-ipv4-pod-cidr': 'true',
    'enable-ipv4': 'true',
    'enable-ipv6': 'false',
    'kube-proxy-replacement': 'true',
    ...(native
      ? { 'routing-mode': 'native', 'ipv4-native-routing-cidr': c.clusterCidr, 'auto-direct-node-routes': 'true' }
      : { 'routing-mode': 'tunnel', 'tunnel-protocol': 'vxlan' }),
    devices: 'eth0',
    'enable-hubble': 'false',
    // No Envoy here, and no cilium-health responder binary.
    'enable-l7-proxy': 'false',
    'enable-endpoint-health-checking': 'false',
    'enable-health-checking': 'false',
    'cgroup-root': AGENT_CGROUP_ROOT,
    'bpf-root': '/sys/fs/bpf',
    'state-dir': AGENT_RUN,
    'lib-dir': `${AGENT_NODE_DIR}/lib`,
    'k8s-kubeconfig-path': `${AGENT_NODE_DIR}/kubeconfig`,
    'cni-exclusive': 'false',
    ...(c.lbMapMax !== undefined ? { 'bpf-lb-map-max': String(c.lbMapMax) } : {}),
  };
}

/** The config-dir files: every key but the empty ones (an empty file would set the flag to ""). */
export function configDirFiles(data: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(data).filter(([, v]) => v !== '');
}
