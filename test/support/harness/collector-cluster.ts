/**
 * The harness control plane with the Helm chart's collector identity in it,
 * started before a test file's tests and stopped after them: the set-up the
 * suites share that put real kube-proxy in lab nodes and act, as the collector
 * would, through its ServiceAccount (the test itself acts as admin).
 */
import { after, before } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Collector } from '../../../collector/index.js';
import { KubernetesServiceFrontend } from '../../../collector/kubernetes/frontend.js';
import type { Logger } from '../../../core/log.js';
import type { ServiceFrontend } from '../../../core/service-frontend.js';
import type { Lab } from '../../../lab/lab.js';
import { connectLabAgents, startLabCollector as startLabSessionCollector } from '../../../lab/lab-collector.js';
import { waitFor } from '../helpers/procs.js';
import { installCollectorIdentity, kubeConfigFrom } from './apply.js';
import { type ControlPlane, startControlPlane } from './control-plane.js';
import { type KubeProxyMode, type RealKubeProxy, startKubeProxy } from './kube-proxy.js';
import { serviceCounts } from './kube-proxy-rules.js';

/** The chart's release and namespace every such suite installs. */
export const COLLECTOR_RELEASE = 'cni-bench-agent';
export const COLLECTOR_NAMESPACE = 'cni-bench';

export interface CollectorCluster {
  cp: ControlPlane;
  admin: KubeConfig;
  /** A kubeconfig file with a real token of the collector's ServiceAccount. */
  kubeconfig: string;
  /** The namespace the chart gives the collector for sweep Services. */
  sweepNamespace: string;
  /** The collector's Service frontend, acting as its ServiceAccount. */
  frontend(log: Logger, extra?: { allowCiliumConfigChange?: boolean }): KubernetesServiceFrontend;
}

/**
 * Registers the file's before/after hooks; the fields are set once `before` ran (not at all when `skip`).
 * One control plane serves the whole file, as it takes tens of seconds to start on a shared machine.
 */
export function collectorCluster(skip: string | false): CollectorCluster {
  const c = {
    frontend: (log, extra = {}) =>
      new KubernetesServiceFrontend(kubeConfigFrom(c.kubeconfig), {
        namespace: COLLECTOR_NAMESPACE,
        sweepNamespace: c.sweepNamespace,
        log,
        ...extra,
      }),
  } as CollectorCluster;
  before(async () => {
    if (skip) return;
    c.cp = await startControlPlane({});
    c.admin = kubeConfigFrom(c.cp.adminKubeconfig);
    Object.assign(c, await installCollectorIdentity(c.cp, COLLECTOR_RELEASE, COLLECTOR_NAMESPACE));
  });
  after(async () => {
    await c.cp?.stop();
  });
  return c;
}

/**
 * The lab's collector (lab/lab-collector.ts) in this process with `frontend` as its Service frontend, store at
 * `dbPath`; resolves once every lab agent is connected. The caller stops it.
 */
export async function startLabCollector(
  lab: Lab,
  frontend: ServiceFrontend,
  dbPath: string,
  log: Logger,
): Promise<Collector> {
  const collector = await startLabSessionCollector(lab, dbPath, log, frontend);
  await connectLabAgents(lab, collector, { agentWaitMs: 30_000 });
  return collector;
}

/** A lab node as kube-proxy needs it. */
export interface KubeProxyNode {
  ns: string;
  name: string;
  underlayIp: string;
}

/** iptables mode's first sync: KUBE-SERVICES holds at least its nodeports rule. */
async function kubeServicesSynced(ns: string): Promise<true | undefined> {
  return (await serviceCounts(ns)).kubeServicesRules > 0 || undefined;
}

/**
 * Starts the real kube-proxy in every node's namespace, each pushed to `proxies` as it starts (so the caller's
 * `finally` stops them all, also when one fails), then waits for each one's first sync: `synced(ns)` returns a
 * value once the node shows it (by default, for iptables mode, a non-empty KUBE-SERVICES). Fails with
 * kube-proxy's log when one exits first. Returns what `synced` returned, per node in order.
 */
export async function startKubeProxies<T = true>(
  cp: ControlPlane,
  nodes: readonly KubeProxyNode[],
  mode: KubeProxyMode,
  proxies: RealKubeProxy[],
  synced: (ns: string) => Promise<T | undefined> = kubeServicesSynced as (ns: string) => Promise<T | undefined>,
): Promise<T[]> {
  const mine: RealKubeProxy[] = [];
  for (const node of nodes) {
    const kp = await startKubeProxy(cp, { mode, netns: node.ns, nodeName: node.name, nodeIp: node.underlayIp });
    proxies.push(kp);
    mine.push(kp);
  }
  const out: T[] = [];
  for (const [i, node] of nodes.entries()) {
    const kp = mine[i] as RealKubeProxy;
    const got = await waitFor(
      `kube-proxy ${mode} in ${node.ns} to sync`,
      async () => {
        if (kp.exitCode() !== undefined) throw new Error(`kube-proxy exited with ${kp.exitCode()}:\n${kp.tail(30)}`);
        const v = await synced(node.ns);
        return v === undefined ? undefined : { v };
      },
      60_000,
      200,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n--- kube-proxy log\n${kp.tail(30)}`, { cause: err });
    });
    out.push(got.v);
  }
  return out;
}
