#!/usr/bin/env node
import { infoRequest } from '../core/flags.js';
/**
 * cni-bench-agent: reads config, assembles the agent (agent/agent.ts), listens
 * on the optional health port and stops cleanly on SIGINT/SIGTERM.
 */
import { createLogger } from '../core/log.js';
import { stopAllChildren } from '../core/process.js';
import { requireSupportedNode, VERSION } from '../core/version.js';
import { assembleAgent } from './agent.js';
import { loadAgentConfig } from './config.js';
import { agentHelp } from './help.js';

async function main(): Promise<void> {
  const config = loadAgentConfig(process.argv.slice(2), process.env);
  const log = createLogger({ component: 'agent', node: config.nodeName });
  const agent = await assembleAgent(config, log);
  const health = config.healthPort ? agent.createHealthServer().listen(config.healthPort) : undefined;
  const shutdown = (signal: string): void => {
    log.info('stopping', { signal });
    agent.stop();
    health?.close();
    void stopAllChildren().finally(() => process.exit(0));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  await agent.run();
}

requireSupportedNode('cni-bench-agent');
const info = infoRequest(process.argv.slice(2));
if (info)
  process.stdout.write(info === 'help' ? agentHelp() : `cni-bench-agent ${VERSION} (node ${process.version})\n`);
else
  main().catch((err: unknown) => {
    process.stderr.write(`cni-bench-agent: ${(err as Error).message}\n`);
    process.exit(2);
  });
