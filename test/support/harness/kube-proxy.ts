/**
 * The real kube-proxy (the lab's runner, lab/k8s/kube-proxy.ts) inside a
 * network namespace against the harness apiserver, so what it programs
 * (iptables or nftables, from real Services and EndpointSlices) lands in that
 * namespace only.
 *
 * It authenticates as user system:kube-proxy, which the apiserver's bootstrap
 * RBAC binds to ClusterRole system:node-proxier (what kubeadm's kube-proxy
 * gets), and reaches the apiserver through api-bridge.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import {
  cleanupKubeProxyRules,
  type KubeProxyMode,
  type KubeProxyProcess,
  startKubeProxyProcess,
} from '../../../lab/k8s/kube-proxy.js';
import { CLUSTER_CIDR } from '../../../lab/plan.js';
import { type ApiBridge, startApiBridge } from './api-bridge.js';
import { kubeConfigFrom } from './apply.js';
import type { ControlPlane } from './control-plane.js';

export type { KubeProxyMode } from '../../../lab/k8s/kube-proxy.js';
/** The lab's pod range: traffic from outside it is masqueraded. */
export const KP_CLUSTER_CIDR = CLUSTER_CIDR;
export const KP_USER = 'system:kube-proxy';

export interface KubeProxyOptions {
  mode: KubeProxyMode;
  netns: string;
  /** Node name (--hostname-override); a Node object of that name is created if missing. */
  nodeName: string;
  /** The node's InternalIP on the Node object (nftables mode serves NodePorts there). */
  nodeIp: string;
  clusterCidr?: string;
  /** klog verbosity; 2 logs every sync. */
  verbosity?: number;
}

export interface RealKubeProxy {
  readonly mode: KubeProxyMode;
  readonly netns: string;
  readonly logPath: string;
  readonly bridge: ApiBridge;
  exitCode(): number | undefined;
  tail(lines: number): string;
  /**
   * SIGTERM, then `kube-proxy --cleanup` in the namespace, then the bridge. The cleanup
   * removes kube-proxy's rules but leaves kubelet's KUBE-FIREWALL (which kube-proxy
   * writes as well); a throwaway namespace is deleted anyway.
   */
  stop(): Promise<void>;
  /** SIGTERM and start again with the same flags, rules left in place (a pod restart); resolves once it runs again. */
  restart(): Promise<void>;
}

/** A kubeconfig for system:kube-proxy that points at the bridge inside the namespace. */
function bridgedKubeconfig(cp: ControlPlane, server: string, netns: string): string {
  const config = JSON.parse(readFileSync(cp.kubeconfigFor(KP_USER), 'utf8')) as {
    clusters: { cluster: { server: string } }[];
  };
  for (const c of config.clusters) c.cluster.server = server;
  const path = join(cp.dir, `kube-proxy-${netns}.kubeconfig`);
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return path;
}

/** Creates the Node object kube-proxy runs as (with its InternalIP), as admin; an existing one is kept. */
export async function ensureNode(cp: ControlPlane, name: string, ip: string): Promise<void> {
  const core = kubeConfigFrom(cp.adminKubeconfig).makeApiClient(CoreV1Api);
  try {
    await core.createNode({
      body: { metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' } } },
    });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
  const node = await core.readNode({ name });
  node.status = {
    ...node.status,
    addresses: [
      { type: 'InternalIP', address: ip },
      { type: 'Hostname', address: name },
    ],
  };
  await core.replaceNodeStatus({ name, body: node });
}

export async function startKubeProxy(cp: ControlPlane, opts: KubeProxyOptions): Promise<RealKubeProxy> {
  await ensureNode(cp, opts.nodeName, opts.nodeIp);
  const bridge = await startApiBridge({ dir: cp.dir, apiserver: cp.server, netns: opts.netns });
  let proc: KubeProxyProcess;
  try {
    proc = startKubeProxyProcess({
      ...opts,
      dir: cp.dir,
      name: `kube-proxy-${opts.mode}-${opts.netns}`,
      kubeconfig: bridgedKubeconfig(cp, bridge.server, opts.netns),
    });
  } catch (err) {
    await bridge.stop();
    throw err;
  }
  return {
    mode: opts.mode,
    netns: opts.netns,
    logPath: proc.logPath,
    bridge,
    exitCode: () => proc.exitCode(),
    tail: (lines) => proc.tail(lines),
    restart: () => proc.restart(),
    stop: async () => {
      try {
        await proc.stop();
        await cleanupKubeProxyRules(opts.netns, opts.mode);
      } finally {
        await bridge.stop();
      }
    },
  };
}
