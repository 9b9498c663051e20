/**
 * Each lab agent's own identity, as a cluster agent has one: the lab holds a
 * random agent key (in its run directory, readable by root only) that its
 * collector is started with, and hands each node the node token derived from
 * it (collector/auth: `cnb-node.<node>.<HMAC>`), in a file of its own that only
 * that node's agents are given. The collector then takes an agent's word for
 * its node only with that node's token: one lab node cannot register, or hold a
 * session, as another. Both files go with the run directory when the lab is
 * destroyed.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeToken } from '../collector/index.js';

export class LabAgentIdentities {
  private readonly key = Buffer.from(randomBytes(32).toString('hex'), 'utf8');

  constructor(private readonly dir: string) {}

  /** The collector's agentKeyFile (written on first use). */
  get keyFile(): string {
    const path = join(this.dir, 'agent.key');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileSync(path, this.key, { mode: 0o600 });
    return path;
  }

  /** Writes `node`'s token file and returns its path (the agent's --token-file). */
  tokenFile(node: string): string {
    const dir = join(this.dir, 'tokens');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `${node}.token`);
    writeFileSync(path, nodeToken(this.key, node), { mode: 0o600 });
    return path;
  }
}
