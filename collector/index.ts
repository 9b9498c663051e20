/**
 * The collector's public entry: what the lab, the CLI and the benchmarks may
 * use of the collector. A collector is assembled by startCollector from a
 * frozen config; a store of past runs can be opened read-only for
 * `compare`. Everything else in collector/ is private to it
 * (test/unit/boundaries.test.ts holds every other folder to that).
 */
export { assembleCollector, type AssembledCollector, type CollectorOptions } from './collector.js';
export { listenCollector, startCollector, type Collector } from './listen.js';
export { collectorConfig, type CollectorConfig } from './config.js';
export { Store } from './store/store.js';
export { DEFAULT_SCALE_STEPS, parseScenario } from './runs/scenario.js';
export { nodeToken } from './auth/principal.js';
export { DEFAULT_MEASUREMENTS } from './runs/scenario-defaults.js';
export { measurementLabel } from './runs/scenario.js';
