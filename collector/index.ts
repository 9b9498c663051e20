/**
 * The collector's public entry: what the lab, the CLI and the benchmarks may
 * use of the collector. A collector is assembled by startCollector from a
 * frozen config; a store of past runs can be opened read-only for
 * `compare`. Everything else in collector/ is private to it
 * (test/unit/boundaries.test.ts holds every other folder to that).
 */

export { nodeToken } from './auth/principal.js';
export { type AssembledCollector, assembleCollector, type CollectorOptions } from './collector.js';
export { type CollectorConfig, collectorConfig } from './config.js';
export { ClusterDescriber } from './kubernetes/cluster-describer.js';
/** One keep-alive connection pool per KubeConfig (client-node opens a TLS connection per call otherwise). */
export { reuseConnections } from './kubernetes/connections.js';
/** The collector's Kubernetes side, which the Cilium lab wires against its own apiserver as collector/main.ts does in a cluster. */
export { KubernetesServiceFrontend } from './kubernetes/frontend.js';
export { ClusterInventory } from './kubernetes/inventory.js';
export { type Collector, listenCollector, startCollector } from './listen.js';
export { DEFAULT_SCALE_STEPS, measurementLabel, parseScenario } from './runs/scenario.js';
export { DEFAULT_MEASUREMENTS } from './runs/scenario-defaults.js';
export { scenarioJsonSchema } from './runs/scenario-json-schema.js';
export { Store } from './store/store.js';
