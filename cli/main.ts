#!/usr/bin/env node
/**
 * cni-bench: the command line. `lab` runs the benchmark in a network-namespace
 * lab on this machine; `lab cleanup` removes what a killed lab left behind.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { asCniBenchError, validationError } from '../core/errors.js';
import { createLogger } from '../core/log.js';
import { requireSupportedNode, VERSION } from '../core/version.js';
import { removeLeftovers } from '../lab/cleanup.js';
import { LAB_DEFAULTS, labCommand } from './lab-command.js';

const USAGE = `usage:
  cni-bench lab [--nodes N] [--duration S] [--warmup S] [--scenario FILE] [--json] [--db FILE]
  cni-bench lab cleanup        remove namespaces and processes of labs that were killed
`;

function num(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const v = Number(text);
  if (!Number.isFinite(v) || v < min) throw validationError([{ path: name, message: `must be a number >= ${min}, got '${text}'` }], 'options');
  return v;
}

async function main(argv: string[]): Promise<number> {
  const log = createLogger({ component: 'cni-bench' });
  const [cmd, ...rest] = argv;
  if (cmd === '--version') {
    process.stdout.write(`cni-bench ${VERSION} (node ${process.version})\n`);
    return 0;
  }
  if (cmd !== 'lab') {
    process.stderr.write(USAGE);
    return cmd === undefined || cmd === '--help' ? 0 : 2;
  }
  if (rest[0] === 'cleanup') {
    const cleaned = await removeLeftovers(log);
    process.stdout.write(`removed ${cleaned.length} leftover lab(s)${cleaned.length ? `: ${cleaned.join(', ')}` : ''}\n`);
    return 0;
  }
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: {
      nodes: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      scenario: { type: 'string' },
      json: { type: 'boolean', default: false },
      db: { type: 'string' },
      'agent-wait': { type: 'string' },
    },
  });
  const nodes = num('--nodes', values.nodes, LAB_DEFAULTS.nodes, 2);
  return labCommand(
    {
      nodes,
      durationSeconds: num('--duration', values.duration, LAB_DEFAULTS.durationSeconds, 0.1),
      warmupSeconds: num('--warmup', values.warmup, LAB_DEFAULTS.warmupSeconds, 0),
      ...(values.scenario ? { scenarioFile: values.scenario } : {}),
      json: values.json,
      dbPath: values.db ?? process.env.CNI_BENCH_DB ?? join(homedir(), '.local', 'state', 'cni-bench', 'lab.db'),
      agentWaitMs: num('--agent-wait', values['agent-wait'], 30, 1) * 1000,
    },
    log,
  );
}

requireSupportedNode('cni-bench');
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const e = asCniBenchError(err);
    process.stderr.write(`cni-bench: ${e.message}\n`);
    process.exit(e.code === 'E_VALIDATION' ? 2 : 1);
  },
);
