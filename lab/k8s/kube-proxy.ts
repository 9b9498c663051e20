/**
 * The real kube-proxy (k8s.io/kubernetes, built by scripts/build-control-plane.sh
 * into the tools cache) as one process inside a node's network namespace, so
 * what it programs (iptables or nftables, from real Services and
 * EndpointSlices) lands in that namespace only. The lab's kube-proxy
 * dataplanes run one per node (lab/proxy-kube-proxy.ts); the test harness runs
 * it against its own apiserver (test/support/harness/kube-proxy.ts).
 *
 * It is told to leave every machine-wide setting alone: conntrack limits and
 * timeouts as they are, its own OOM score unchanged, metrics and healthz on the
 * namespace's loopback (reachable from nowhere else).
 */
import { join } from 'node:path';
import { run } from '../../core/process.js';
import { onNodeCpus } from '../cpu-sets.js';
import { CLUSTER_CIDR } from '../plan.js';
import { type Component, startComponent } from './component.js';
import { labToolPath } from './tools.js';

export type KubeProxyMode = 'iptables' | 'nftables';
/** Where kube-proxy serves /healthz inside its namespace. */
export const KUBE_PROXY_HEALTHZ = '127.0.0.1:10256';

export interface KubeProxyFlags {
  mode: KubeProxyMode;
  /** Node name (--hostname-override). */
  nodeName: string;
  kubeconfig: string;
  /** Traffic from outside it is masqueraded (default the lab's pod range). */
  clusterCidr?: string;
  /** klog verbosity; 2 logs every sync. */
  verbosity?: number;
}

/** kube-proxy's flags. Pure, so what it is told is reviewable in one place. */
export function kubeProxyArgs(o: KubeProxyFlags): string[] {
  return [
    `--kubeconfig=${o.kubeconfig}`,
    `--proxy-mode=${o.mode}`,
    `--hostname-override=${o.nodeName}`,
    `--cluster-cidr=${o.clusterCidr ?? CLUSTER_CIDR}`,
    // Machine-wide or kernel-module state stays as it is: no nf_conntrack_max / hashsize,
    // no conntrack timeouts (0 = leave as-is), no OOM score change.
    '--conntrack-max-per-core=0',
    '--conntrack-tcp-timeout-established=0s',
    '--conntrack-tcp-timeout-close-wait=0s',
    '--oom-score-adj=0',
    // The namespace's own loopback: reachable from nowhere else.
    '--metrics-bind-address=127.0.0.1:10249',
    `--healthz-bind-address=${KUBE_PROXY_HEALTHZ}`,
    '--profiling=false',
    `--v=${o.verbosity ?? 2}`,
  ];
}

export interface KubeProxyProcessOptions extends KubeProxyFlags {
  /** Directory for its log (<dir>/<name>.log). */
  dir: string;
  name: string;
  netns: string;
  /** The node's CPUs (lab/cpu-sets.ts): kube-proxy runs there, as on its node. */
  cpus?: readonly number[];
}

export interface KubeProxyProcess {
  readonly mode: KubeProxyMode;
  readonly netns: string;
  readonly logPath: string;
  /** The running process's pid (`ip netns exec` execs kube-proxy, or taskset which execs it). */
  pid(): number;
  exitCode(): number | undefined;
  tail(lines: number): string;
  /** SIGTERM and start again with the same flags, rules left in place (a pod restart). */
  restart(): Promise<void>;
  /** SIGTERM (SIGKILL after a grace period); the rules stay. */
  stop(): Promise<void>;
}

/** Starts kube-proxy in `o.netns`; returns at once (readiness is the caller's to verify, in the dataplane). */
export function startKubeProxyProcess(o: KubeProxyProcessOptions): KubeProxyProcess {
  const [file, args] = onNodeCpus(o.cpus, labToolPath('kube-proxy'), kubeProxyArgs(o));
  const argv = ['netns', 'exec', o.netns, file, ...args];
  let proc: Component = startComponent(o.dir, o.name, 'ip', argv);
  return {
    mode: o.mode,
    netns: o.netns,
    logPath: join(o.dir, `${o.name}.log`),
    pid: () => proc.pid,
    exitCode: () => proc.exitCode(),
    tail: (lines) => proc.tail(lines),
    restart: async () => {
      await proc.stop();
      proc = startComponent(o.dir, o.name, 'ip', argv);
    },
    stop: () => proc.stop(),
  };
}

/** `kube-proxy --cleanup` in `netns`: removes kube-proxy's rules of `mode` (a namespace that goes anyway needs none). */
export async function cleanupKubeProxyRules(netns: string, mode: KubeProxyMode): Promise<void> {
  await run('ip', ['netns', 'exec', netns, labToolPath('kube-proxy'), '--cleanup', `--proxy-mode=${mode}`], {
    tool: 'kube-proxy --cleanup',
    timeoutMs: 60_000,
  });
}

export interface KubeProxyHealth {
  /** HTTP status of /healthz (200 healthy; 503 while a queued change is overdue or the Node is not eligible). */
  status: number;
  /**
   * When every proxier (IP family) last finished a sync, the oldest of them,
   * ms since the epoch; undefined before each has synced once. The top-level
   * `lastUpdated` is not it: a healthy answer sets that to the current time
   * (pkg/proxy/healthcheck/proxy_health.go), so only `status` says a sync ran.
   */
  syncedMs: number | undefined;
}

/**
 * Pure: kube-proxy's /healthz answer (JSON with a `status` per IP family once
 * its proxier synced). A body that is not that JSON is an error naming
 * kube-proxy, never a healthy reading.
 */
export function parseKubeProxyHealthz(status: number, body: string): KubeProxyHealth {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new Error(`kube-proxy /healthz: HTTP ${status}, not JSON: ${body.slice(0, 120)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || !('currentTime' in parsed))
    throw new Error(`kube-proxy /healthz: HTTP ${status}, not kube-proxy's health: ${body.slice(0, 120)}`);
  const families = Object.values((parsed as { status?: Record<string, { lastUpdated?: unknown }> }).status ?? {});
  let synced: number | undefined;
  for (const f of families) {
    const ms = typeof f.lastUpdated === 'string' ? Date.parse(f.lastUpdated) : Number.NaN;
    if (Number.isNaN(ms))
      throw new Error(`kube-proxy /healthz: a proxier's lastUpdated is not a time: ${body.slice(0, 200)}`);
    synced = synced === undefined ? ms : Math.min(synced, ms);
  }
  return { status, syncedMs: synced };
}
