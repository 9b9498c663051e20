/**
 * The real Cilium CNI plugin, called through the CNI protocol as a kubelet's
 * container runtime calls it: CNI_COMMAND ADD or DEL, the pod's network
 * namespace as CNI_NETNS, the pod's name and namespace in CNI_ARGS, the
 * plugin's config on stdin. It runs in the node's network namespace (it makes
 * the host-side lxc veth where it runs) and the root mount namespace (so
 * /run/netns/<pod> is a real nsfs file), and reaches the node's agent through
 * CILIUM_SOCK.
 */
import { dirname } from 'node:path';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { run } from '../../core/process.js';

export interface CniCall {
  cni: string;
  nodeNs: string;
  podNs: string;
  containerId: string;
  podName: string;
  podNamespace: string;
  podUid: string;
  /** The node agent's API socket (root mount namespace path). */
  socket: string;
  logFile: string;
}

export interface CniAddResult {
  ip: string;
  /** The host-side interface in the node namespace, when the plugin names it. */
  hostIf?: string;
}

/** Pure: the plugin's stdin (Cilium's default conflist entry, daemon/cmd/cni/config.go, with the node's log file). */
export function cniConfig(logFile: string): string {
  return JSON.stringify({
    cniVersion: '1.0.0',
    name: 'cilium',
    type: 'cilium-cni',
    'enable-debug': false,
    'log-file': logFile,
  });
}

/** Pure: the pod's IPv4 address and host interface from a CNI 1.0 ADD result; a result without one is an error naming cilium-cni. */
export function parseCniAddResult(stdout: string): CniAddResult {
  let r: { ips?: { address?: string; interface?: number }[]; interfaces?: { name?: string; sandbox?: string }[] };
  try {
    r = JSON.parse(stdout) as typeof r;
  } catch (err) {
    throw new CniBenchError(ErrorCodes.PARSE, `cilium-cni: ADD result is not JSON: ${stdout.slice(0, 200)}`, {
      cause: err,
      details: { tool: 'cilium-cni' },
    });
  }
  const v4 = (r.ips ?? []).find((i) => i.address && /^\d+\.\d+\.\d+\.\d+\/\d+$/.test(i.address));
  if (!v4?.address)
    throw new CniBenchError(ErrorCodes.PARSE, `cilium-cni: ADD result has no IPv4 address: ${stdout.slice(0, 200)}`, {
      details: { tool: 'cilium-cni' },
    });
  const hostIf = (r.interfaces ?? []).find((i) => i.name && !i.sandbox)?.name;
  return { ip: v4.address.split('/')[0] as string, ...(hostIf ? { hostIf } : {}) };
}

function env(c: CniCall, command: 'ADD' | 'DEL'): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    CNI_COMMAND: command,
    CNI_CONTAINERID: c.containerId,
    CNI_NETNS: `/run/netns/${c.podNs}`,
    CNI_IFNAME: 'eth0',
    CNI_PATH: dirname(c.cni),
    CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=${c.podNamespace};K8S_POD_NAME=${c.podName};K8S_POD_UID=${c.podUid}`,
    CILIUM_SOCK: c.socket,
  };
}

export async function cniAdd(c: CniCall, timeoutMs = 60_000): Promise<CniAddResult> {
  const r = await run('nsenter', [`--net=/run/netns/${c.nodeNs}`, c.cni], {
    tool: 'cilium-cni ADD',
    input: cniConfig(c.logFile),
    env: env(c, 'ADD'),
    timeoutMs,
  });
  return parseCniAddResult(r.stdout);
}

export async function cniDel(c: CniCall, timeoutMs = 30_000): Promise<void> {
  await run('nsenter', [`--net=/run/netns/${c.nodeNs}`, c.cni], {
    tool: 'cilium-cni DEL',
    input: cniConfig(c.logFile),
    env: env(c, 'DEL'),
    timeoutMs,
  });
}
