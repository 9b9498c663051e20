#!/usr/bin/env node
/** cni-bench-collector: answers --help/--version, checks the Node version, reads config, and serves (serve.ts). */
import { infoRequest } from '../core/flags.js';
import { createLogger } from '../core/log.js';
import { requireSupportedNode, VERSION } from '../core/version.js';
import { loadCollectorConfig } from './config.js';
import { collectorHelp } from './help.js';

async function main(): Promise<void> {
  const config = loadCollectorConfig(process.argv.slice(2), process.env);
  const { serve } = await import('./serve.js');
  await serve(config, createLogger({ component: 'collector' }));
}

requireSupportedNode('cni-bench-collector');
const info = infoRequest(process.argv.slice(2));
if (info)
  process.stdout.write(
    info === 'help' ? collectorHelp() : `cni-bench-collector ${VERSION} (node ${process.version})\n`,
  );
else
  main().catch((err: unknown) => {
    // One line, whatever the error's own layout (parseArgs' hints span several).
    process.stderr.write(`cni-bench-collector: ${(err as Error).message.replace(/\s*\n\s*/g, ' ')}\n`);
    process.exit(2);
  });
