/**
 * The collector process's wiring: the Kubernetes frontend, inventory and
 * cluster description when an API server is reachable, then the collector
 * (assembled and bound by listen.ts), and a clean stop on SIGINT/SIGTERM.
 * main.ts loads this only after the Node version check (the store needs
 * node:sqlite, the Kubernetes client a recent undici).
 */
import { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from '../core/log.js';
import { tokenReviewer } from './auth/token-review.js';
import type { CollectorConfig } from './config.js';
import { ClusterDescriber } from './kubernetes/cluster-describer.js';
import { ClusterConditions } from './kubernetes/conditions.js';
import { allowDataplaneRestart } from './kubernetes/dataplane-restart.js';
import { KubernetesServiceFrontend } from './kubernetes/frontend.js';
import { ClusterInventory } from './kubernetes/inventory.js';
import { loadKubeConfig } from './kubernetes/kube-config.js';
import { DEFAULT_PACER } from './kubernetes/pacer.js';
import { startCollector } from './listen.js';

/** Connects to Kubernetes when it is there, starts the collector, and stops it cleanly on SIGINT/SIGTERM. */
export async function serve(config: CollectorConfig, log: Logger): Promise<void> {
  const kc = loadKubeConfig(config);
  let frontend: KubernetesServiceFrontend | undefined;
  let inventory: ClusterInventory | undefined;
  if (kc) {
    frontend = new KubernetesServiceFrontend(kc, {
      namespace: config.namespace,
      sweepNamespace: config.sweepNamespace,
      pacer: { ...DEFAULT_PACER, qps: config.kubeQps, burst: config.kubeBurst, parallelism: config.kubeParallelism },
      ciliumNamespace: config.ciliumNamespace,
      allowCiliumConfigChange: config.allowCiliumConfigChange,
      log,
    });
    const { leftovers } = await frontend.init();
    const conditions = new ClusterConditions(kc, kc.makeApiClient(CoreV1Api), frontend.pacer, {
      namespace: config.namespace,
      agentSelector: config.agentSelector,
      ciliumNamespace: config.ciliumNamespace,
      allowCiliumConfigChange: config.allowCiliumConfigChange,
      allowNetworkPolicy: config.allowNetworkPolicy,
      allowCiliumNetworkPolicy: config.allowCiliumNetworkPolicy,
      log,
    });
    if (config.allowNetworkPolicy || config.allowCiliumNetworkPolicy) {
      const stale = await conditions.init();
      if (stale) log.warn('removed condition policies an earlier collector left behind', { objects: stale });
    }
    if (config.allowCiliumConfigChange && (await conditions.recoverHubble()))
      log.warn('restored cilium-config enable-hubble an earlier collector left changed');
    frontend.conditions = conditions;
    // Only with the operator's opt-in (rbac.dataplaneRestart.enabled grants list and delete of pods there).
    if (config.allowDataplaneRestart)
      allowDataplaneRestart(frontend, kc, {
        namespace: config.dataplaneNamespace,
        selector: config.dataplaneSelector,
        log,
      });
    inventory = new ClusterInventory(kc, frontend.pacer, config.namespace, config.agentSelector, log);
    await inventory.start();
    const describer = new ClusterDescriber(kc, frontend.pacer, inventory, {
      ciliumNamespace: config.ciliumNamespace,
      log,
    });
    const cluster = await describer.refresh();
    frontend.describeWith(describer);
    log.info('kubernetes frontend ready', {
      server: kc.getCurrentCluster()?.server,
      version: cluster.kubernetesVersion,
      cni: cluster.cni,
      cniMode: cluster.cniMode,
      kubeProxyMode: cluster.kubeProxyMode,
      leftoversRemoved: leftovers,
      ...inventory.coverage(),
    });
  }
  const nodes = inventory;
  if (config.agentTokenReview && !kc)
    throw new Error(
      'agentTokenReview: needs Kubernetes, and none was found (set kubernetes and kubeconfig, or run in a cluster)',
    );
  // Agents' pod-bound ServiceAccount tokens, verified by the API server (auth/token-review.ts).
  const tokenReview =
    config.agentTokenReview && kc
      ? tokenReviewer(kc, config.agentServiceAccount, (why) => log.warn('agent token refused', { why }))
      : undefined;
  const collector = await startCollector(config, log, frontend, {
    ...(nodes ? { monitor: { nodeStatus: () => nodes.nodeStatus() } } : {}),
    ...(tokenReview ? { tokenReview } : {}),
    // Load only on Ready, schedulable workers unless a scenario names the node; a node the watch does not know is allowed.
    ...(nodes
      ? {
          canLoad: (name: string) => {
            const n = nodes.nodeStatus().get(name);
            return !n || (n.ready && n.schedulable && n.worker);
          },
        }
      : {}),
  });
  // Cordoned and NotReady nodes leave the monitor's plans as the node watch sees them.
  nodes?.onNodeStatusChange(() => collector.monitor.nodesChanged());
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    Promise.all([collector.close(), inventory?.stop()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
