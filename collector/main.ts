#!/usr/bin/env node
/** cni-bench-collector: reads config, connects to Kubernetes when it is there, starts the collector, stops cleanly on SIGINT/SIGTERM. */
import { createLogger } from '../core/log.js';
import { infoRequest } from '../core/flags.js';
import { requireSupportedNode, VERSION } from '../core/version.js';
import { startCollector } from './listen.js';
import { loadCollectorConfig } from './config.js';
import { collectorHelp } from './help.js';
import { ClusterDescriber } from './kubernetes/cluster-describer.js';
import { KubernetesServiceFrontend } from './kubernetes/frontend.js';
import { ClusterInventory } from './kubernetes/inventory.js';
import { loadKubeConfig } from './kubernetes/kube-config.js';
import { DEFAULT_PACER } from './kubernetes/pacer.js';

async function main(): Promise<void> {
  const config = loadCollectorConfig(process.argv.slice(2), process.env);
  const log = createLogger({ component: 'collector' });
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
    inventory = new ClusterInventory(kc, frontend.pacer, config.namespace, config.agentSelector, log);
    await inventory.start();
    const describer = new ClusterDescriber(kc, frontend.pacer, inventory, { ciliumNamespace: config.ciliumNamespace, log });
    const cluster = await describer.refresh();
    frontend.describeWith(describer);
    log.info('kubernetes frontend ready', { server: kc.getCurrentCluster()?.server, version: cluster.kubernetesVersion, cni: cluster.cni, cniMode: cluster.cniMode, kubeProxyMode: cluster.kubeProxyMode, leftoversRemoved: leftovers, ...inventory.coverage() });
  }
  const nodes = inventory;
  const collector = await startCollector(config, log, frontend, nodes ? { monitor: { nodeStatus: () => nodes.nodeStatus() } } : {});
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

requireSupportedNode('cni-bench-collector');
const info = infoRequest(process.argv.slice(2));
if (info) process.stdout.write(info === 'help' ? collectorHelp() : `cni-bench-collector ${VERSION} (node ${process.version})\n`);
else main().catch((err: unknown) => {
  process.stderr.write(`cni-bench-collector: ${(err as Error).message}\n`);
  process.exit(2);
});
