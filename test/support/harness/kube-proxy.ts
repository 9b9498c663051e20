/**
 * The real kube-proxy (k8s.io/kubernetes, built by scripts/build-control-plane.sh)
 * running inside a network namespace against the harness apiserver, so what it
 * programs (iptables or nftables, from real Services and EndpointSlices) lands
 * in that namespace only.
 *
 * It authenticates as user system:kube-proxy, which the apiserver's bootstrap
 * RBAC binds to ClusterRole system:node-proxier (what kubeadm's kube-proxy
 * gets), reaches the apiserver through api-bridge.ts, and is told to leave
 * every machine-wide setting alone: conntrack limits and timeouts as they are,
 * its own OOM score unchanged, metrics and healthz on the namespace's loopback.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { run } from '../../../core/process.js';
import { type ApiBridge, startApiBridge } from './api-bridge.js';
import { kubeConfigFrom } from './apply.js';
import { type Component, startComponent } from './component.js';
import type { ControlPlane } from './control-plane.js';
import { toolPath } from './tools.js';

export type KubeProxyMode = 'iptables' | 'nftables';
/** The lab's pod range (lab/plan.ts CLUSTER_CIDR): traffic from outside it is masqueraded. */
export const KP_CLUSTER_CIDR = '198.18.16.0/20';
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

/** kube-proxy's flags. Pure, so what it is told is reviewable in one place. */
export function kubeProxyArgs(o: KubeProxyOptions & { kubeconfig: string }): string[] {
  return [
    `--kubeconfig=${o.kubeconfig}`,
    `--proxy-mode=${o.mode}`,
    `--hostname-override=${o.nodeName}`,
    `--cluster-cidr=${o.clusterCidr ?? KP_CLUSTER_CIDR}`,
    // Machine-wide or kernel-module state stays as it is: no nf_conntrack_max / hashsize,
    // no conntrack timeouts (0 = leave as-is), no OOM score change.
    '--conntrack-max-per-core=0',
    '--conntrack-tcp-timeout-established=0s',
    '--conntrack-tcp-timeout-close-wait=0s',
    '--oom-score-adj=0',
    // The namespace's own loopback: reachable from nowhere else.
    '--metrics-bind-address=127.0.0.1:10249',
    '--healthz-bind-address=127.0.0.1:10256',
    '--profiling=false',
    `--v=${o.verbosity ?? 2}`,
  ];
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
  const binary = toolPath('kube-proxy');
  await ensureNode(cp, opts.nodeName, opts.nodeIp);
  const bridge = await startApiBridge({ dir: cp.dir, apiserver: cp.server, netns: opts.netns });
  const name = `kube-proxy-${opts.mode}-${opts.netns}`;
  let proc: Component;
  let argv: string[];
  try {
    const kubeconfig = bridgedKubeconfig(cp, bridge.server, opts.netns);
    argv = ['netns', 'exec', opts.netns, binary, ...kubeProxyArgs({ ...opts, kubeconfig })];
    proc = startComponent(cp.dir, name, 'ip', argv);
  } catch (err) {
    await bridge.stop();
    throw err;
  }
  return {
    mode: opts.mode,
    netns: opts.netns,
    logPath: join(cp.dir, `${name}.log`),
    bridge,
    exitCode: () => proc.exitCode(),
    tail: (lines) => proc.tail(lines),
    restart: async () => {
      await proc.stop();
      proc = startComponent(cp.dir, name, 'ip', argv);
    },
    stop: async () => {
      try {
        await proc.stop();
        await run('ip', ['netns', 'exec', opts.netns, binary, '--cleanup', `--proxy-mode=${opts.mode}`], {
          tool: 'kube-proxy --cleanup',
          timeoutMs: 60_000,
        });
      } finally {
        await bridge.stop();
      }
    },
  };
}
