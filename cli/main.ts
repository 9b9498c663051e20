#!/usr/bin/env node
/**
 * cni-bench: the command line. A dispatch table from command words to
 * command modules, each with its own flag schema (cli/*-command.ts); this file
 * checks the Node version before loading any of them, prints help from the
 * schemas, and maps errors to exit codes: 0 ok, 1 failed, 2 bad usage,
 * 130/143 interrupted.
 */
import { asCniBenchError } from '../core/errors.js';
import { type CommandSpec, helpText, parseFlags } from '../core/flags.js';
import { createLogger } from '../core/log.js';
import { requireSupportedNode, VERSION } from '../core/version.js';
import type { Command } from './command.js';

interface Entry {
  summary: string;
  load(): Promise<{ command: Command }>;
}

/** Every command, by the words that name it; loaded only when used (after the Node version check). */
const COMMANDS: Readonly<Record<string, Entry>> = {
  lab: {
    summary: 'run the benchmark in a network-namespace lab on this machine',
    load: () => import('./lab-command.js'),
  },
  'lab sweep': {
    summary: 'the Service scale sweep, once per dataplane',
    load: () => import('./sweep-command.js'),
  },
  'lab study': {
    summary: 'the reference study: matrix and Service sweep per dataplane, one comparison',
    load: () => import('./study-command.js'),
  },
  'lab monitor': {
    summary: 'monitoring mode in a lab: peer probes and dataplane gauges',
    load: () => import('./monitor-command.js'),
  },
  'lab cleanup': { summary: 'remove what killed labs left behind', load: () => import('./cleanup-command.js') },
  compare: { summary: 'runs side by side with a verdict per measurement', load: () => import('./compare-command.js') },
  doctor: { summary: 'check the tools the agent needs on this PATH', load: () => import('./doctor-command.js') },
  run: { summary: 'start a run on a collector, follow it, print its report', load: () => import('./run-command.js') },
  runs: { summary: "list a collector's runs", load: () => import('./runs-command.js') },
  report: { summary: "a run's report (md, json, html, csv)", load: () => import('./report-command.js') },
  cancel: { summary: 'cancel a run on a collector', load: () => import('./cancel-command.js') },
  cluster: { summary: 'what the collector detects of its cluster', load: () => import('./cluster-command.js') },
  agents: { summary: 'the agents a collector knows', load: () => import('./agents-command.js') },
  'scenario schema': {
    summary: 'the JSON Schema of scenario files',
    load: () => import('./scenario-schema-command.js'),
  },
  'scenario check': {
    summary: 'validate scenario files (JSON or YAML)',
    load: () => import('./scenario-check-command.js'),
  },
};

const ROOT: CommandSpec = {
  usage: 'cni-bench',
  summary: 'Measures what a Kubernetes network dataplane costs. `cni-bench COMMAND --help` describes each command.',
  flags: {},
  subcommands: Object.entries(COMMANDS).map(([name, e]) => ({ name, summary: e.summary })),
  env: [
    { name: 'CNI_BENCH_DB', help: 'the store of lab runs (default ~/.local/state/cni-bench/lab.db)' },
    { name: 'CNI_BENCH_LOG_LEVEL', help: 'debug, info, warn or error (logs go to stderr)' },
    {
      name: 'CNI_BENCH_COLLECTOR',
      help: "the collector's REST address for run, runs, report, cancel, compare, cluster, agents",
    },
    { name: 'CNI_BENCH_TOKEN_FILE', help: "file holding the collector's operator token" },
    {
      name: 'KUBECONFIG',
      help: "without --collector: the kubeconfig through which the chart release's collector is found and port-forwarded to (docs/cli-cluster.md)",
    },
    { name: 'CNI_BENCH_RELEASE', help: "the chart's release to reach (default cni-bench-agent)" },
  ],
  examples: [
    'cni-bench lab',
    'cni-bench lab --help',
    'cni-bench run --collector http://127.0.0.1:8080 --token-file ./token',
    'cni-bench agents --namespace cni-bench',
  ],
  notes: [
    'Exit codes: 0 ok, 1 the run or check failed, 2 bad command or flags, 3 compare --fail-on worse found a measurement significantly worse, 130/143 interrupted (SIGINT/SIGTERM).',
  ],
};

function versionLine(): string {
  return `cni-bench ${VERSION} (node ${process.version})\n`;
}

/** The longest run of leading words that names a command, and the arguments after it. */
function resolve(argv: readonly string[]): { entry?: Entry; rest: readonly string[] } {
  const two = `${argv[0]} ${argv[1]}`;
  if (COMMANDS[two]) return { entry: COMMANDS[two], rest: argv.slice(2) };
  const one = argv[0] ?? '';
  return COMMANDS[one] ? { entry: COMMANDS[one], rest: argv.slice(1) } : { rest: argv };
}

async function main(argv: readonly string[]): Promise<number> {
  const { entry, rest } = resolve(argv);
  if (!entry) {
    if (argv[0] !== undefined && !argv[0].startsWith('-')) {
      process.stderr.write(`cni-bench: unknown command '${argv[0]}' (see cni-bench --help)\n`);
      return 2;
    }
    const root = parseFlags(ROOT, argv);
    process.stdout.write(root.version ? versionLine() : helpText(ROOT));
    return 0;
  }
  const { command } = await entry.load();
  const parsed = parseFlags(command.spec, rest, process.env);
  if (parsed.help || parsed.version) {
    process.stdout.write(parsed.help ? helpText(command.spec) : versionLine());
    return 0;
  }
  const ctx = {
    log: createLogger({ component: 'cni-bench' }),
    stdout: (s: string) => void process.stdout.write(s),
    env: process.env,
  };
  return command.run(parsed.values, parsed.positionals, ctx);
}

/**
 * Exits once stdout and stderr have written everything: to a pipe, a write
 * past the pipe's buffer (a report of 100+ KB) completes later, and a bare
 * process.exit() would cut it short (`cni-bench lab --json | jq` read a
 * truncated report).
 */
function exitFlushed(code: number): void {
  let pending = 2;
  const done = (): void => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

requireSupportedNode('cni-bench');
main(process.argv.slice(2)).then(
  (code) => exitFlushed(code),
  (err: unknown) => {
    const e = asCniBenchError(err);
    process.stderr.write(`cni-bench: ${e.message}\n`);
    exitFlushed(e.code === 'E_VALIDATION' ? 2 : 1);
  },
);
