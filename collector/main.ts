#!/usr/bin/env node
/** cni-bench-collector: reads config, starts the collector, stops cleanly on SIGINT/SIGTERM. */
import { createLogger } from '../core/log.js';
import { requireSupportedNode } from '../core/version.js';
import { startCollector } from './collector.js';
import { loadCollectorConfig } from './config.js';

async function main(): Promise<void> {
  const config = loadCollectorConfig(process.argv.slice(2), process.env);
  const log = createLogger({ component: 'collector' });
  const collector = await startCollector(config, log);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    collector.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

requireSupportedNode('cni-bench-collector');
main().catch((err: unknown) => {
  process.stderr.write(`cni-bench-collector: ${(err as Error).message}\n`);
  process.exit(2);
});
