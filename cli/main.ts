#!/usr/bin/env node
/**
 * cni-bench: the command line. `lab` runs the benchmark in a network-namespace
 * lab on this machine; `lab sweep` runs the Service scale sweep per kube-proxy
 * mode; `lab cleanup` removes what a killed lab left behind; `compare` sets
 * runs side by side; `doctor` checks the tools the agent needs.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { asCniBenchError, validationError } from '../core/errors.js';
import { createLogger } from '../core/log.js';
import { requireSupportedNode, VERSION } from '../core/version.js';
import { CILIUM_DATAPLANES, type IptablesBackend, type LabProxyOptions, PROXY_MODES, type ProxyMode, removeLeftovers } from '../lab/index.js';
import { DEFAULT_SCALE_STEPS } from '../collector/index.js';
import { LAB_DEFAULTS, labCommand } from './lab-command.js';
import { sweepCommand } from './sweep-command.js';
import { COMPARE_USAGE, compareCommand } from './compare-command.js';
import { DOCTOR_USAGE, doctorCommand } from './doctor-command.js';
import { MONITOR_USAGE, monitorCommand } from './monitor-command.js';

const USAGE = `usage:
  cni-bench lab [--nodes N] [--duration S] [--warmup S] [--scenario FILE] [--json] [--db FILE]
                [--dataplane iptables|nftables|cilium|cilium-vxlan] [--proxy-mode iptables|nftables]
                [--iptables-backend legacy|nft] [--link-mbit N] [--share-cpus]
                (cilium: real Cilium, native routing; cilium-vxlan: its VXLAN tunnel; both kube-proxy replacement,
                 with the lab's own apiserver; needs 'bash scripts/setup.sh --cilium')
                (environment IPERF_DURATION, FORTIO_DURATION, ROUNDS, ROUND_SLEEP override the scenario)
  cni-bench lab sweep [--modes iptables,nftables] [--steps 0,5000,10000,20000,30000] [--endpoints 4]
                [--duration S] [--warmup S] [--rounds N] [--nodes N] [--iptables-backend legacy|nft] [--share-cpus] [--json] [--db FILE]
  (each lab node gets its own share of the CPUs when there are at least as many as nodes; --share-cpus lets all use all)
  cni-bench lab cleanup        remove namespaces and processes of labs that were killed
${MONITOR_USAGE}${COMPARE_USAGE}${DOCTOR_USAGE}`;

const BACKENDS = ['legacy', 'nft'] as const;
const DATAPLANES = [...PROXY_MODES, ...CILIUM_DATAPLANES] as const;

/** --dataplane, or --proxy-mode (the kube-proxy modes only); both given must agree. */
function labDataplane(dataplane: string | undefined, proxyMode: string | undefined, backend: string | undefined): LabProxyOptions {
  const mode = oneOf('--dataplane', dataplane ?? proxyMode, DATAPLANES, 'iptables');
  if (proxyMode !== undefined) oneOf<ProxyMode>('--proxy-mode', proxyMode, PROXY_MODES, 'iptables');
  if (dataplane !== undefined && proxyMode !== undefined && dataplane !== proxyMode) {
    throw validationError([{ path: '--proxy-mode', message: `conflicts with --dataplane ${dataplane}` }], 'options');
  }
  const iptablesBackend = oneOf<IptablesBackend>('--iptables-backend', backend, BACKENDS, 'legacy');
  if (mode === 'cilium' || mode === 'cilium-vxlan') {
    if (backend !== undefined) throw validationError([{ path: '--iptables-backend', message: `applies to the iptables dataplane, not ${mode}` }], 'options');
    return { mode };
  }
  return { mode, iptablesBackend };
}

function oneOf<T extends string>(name: string, text: string | undefined, allowed: readonly T[], fallback: T): T {
  if (text === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(text)) throw validationError([{ path: name, message: `must be one of ${allowed.join(', ')}, got '${text}'` }], 'options');
  return text as T;
}

function numList(name: string, text: string | undefined, fallback: readonly number[]): number[] {
  if (text === undefined) return [...fallback];
  const out = text.split(',').map((t) => Number(t.trim()));
  if (!out.length || out.some((n) => !Number.isInteger(n) || n < 0)) throw validationError([{ path: name, message: `must be a comma-separated list of integers >= 0, got '${text}'` }], 'options');
  return out;
}

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
  const dbDefault = process.env.CNI_BENCH_DB ?? join(homedir(), '.local', 'state', 'cni-bench', 'lab.db');
  if (cmd === 'compare') return compareCommand(rest, { stdout: (s) => process.stdout.write(s), dbPath: dbDefault });
  if (cmd === 'doctor') return doctorCommand(rest, { stdout: (s) => process.stdout.write(s) });
  if (cmd !== 'lab') {
    process.stderr.write(USAGE);
    return cmd === undefined || cmd === '--help' ? 0 : 2;
  }
  if (rest[0] === 'cleanup') {
    const cleaned = await removeLeftovers(log);
    process.stdout.write(`removed ${cleaned.length} leftover lab(s)${cleaned.length ? `: ${cleaned.join(', ')}` : ''}\n`);
    return 0;
  }
  if (rest[0] === 'monitor') return monitorCommand(rest.slice(1), log, dbDefault);
  if (rest[0] === 'sweep') {
    const { values } = parseArgs({
      args: rest.slice(1),
      strict: true,
      options: {
        modes: { type: 'string' },
        steps: { type: 'string' },
        endpoints: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        rounds: { type: 'string' },
        nodes: { type: 'string' },
        'iptables-backend': { type: 'string' },
        json: { type: 'boolean', default: false },
        db: { type: 'string' },
        'agent-wait': { type: 'string' },
        'share-cpus': { type: 'boolean', default: false },
      },
    });
    const modes = (values.modes ?? PROXY_MODES.join(',')).split(',').map((m) => oneOf<ProxyMode>('--modes', m.trim(), PROXY_MODES, 'iptables'));
    return sweepCommand(
      {
        nodes: num('--nodes', values.nodes, 2, 2),
        modes,
        iptablesBackend: oneOf<IptablesBackend>('--iptables-backend', values['iptables-backend'], BACKENDS, 'legacy'),
        steps: numList('--steps', values.steps, DEFAULT_SCALE_STEPS),
        endpointsPerService: num('--endpoints', values.endpoints, 4, 1),
        durationSeconds: num('--duration', values.duration, LAB_DEFAULTS.durationSeconds, 0.1),
        warmupSeconds: num('--warmup', values.warmup, 1, 0),
        rounds: num('--rounds', values.rounds, LAB_DEFAULTS.rounds, 1),
        json: values.json,
        dbPath: values.db ?? dbDefault,
        agentWaitMs: num('--agent-wait', values['agent-wait'], 30, 1) * 1000,
        shareCpus: values['share-cpus'],
      },
      log,
    );
  }
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: {
      dataplane: { type: 'string' },
      'proxy-mode': { type: 'string' },
      'iptables-backend': { type: 'string' },
      nodes: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      scenario: { type: 'string' },
      json: { type: 'boolean', default: false },
      db: { type: 'string' },
      'agent-wait': { type: 'string' },
      'link-mbit': { type: 'string' },
      'share-cpus': { type: 'boolean', default: false },
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
      dbPath: values.db ?? dbDefault,
      agentWaitMs: num('--agent-wait', values['agent-wait'], 30, 1) * 1000,
      shareCpus: values['share-cpus'],
      ...(values['link-mbit'] !== undefined ? { linkMbit: num('--link-mbit', values['link-mbit'], 0, 1) } : {}),
      proxy: labDataplane(values.dataplane, values['proxy-mode'], values['iptables-backend']),
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
