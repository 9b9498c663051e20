/**
 * `cni-bench lab`: runs a scenario (default: the study's measurements with
 * short durations) in a fresh lab, prints the report, and tears everything
 * down: on success, on failure, and on SIGINT/SIGTERM.
 */
import { parseScenario } from '../collector/index.js';
import { type FlagValues, numberFlag, oneOfFlag, stringFlag, switchFlag } from '../core/flags.js';
import { exitCodeFor, trapInterrupts } from '../core/interrupts.js';
import type { Logger } from '../core/log.js';
import {
  dataplaneProxy,
  LAB_DATAPLANES,
  type LabDataplane,
  type LabProxyOptions,
  PROXY_MODES,
  type ProxyMode,
  runInLab,
} from '../lab/index.js';
import { renderMarkdown } from '../report/markdown.js';
import { type ReportFormat, renderReport } from '../report/report-formats.js';
import { defineCommand } from './command.js';
import {
  agentWaitFlag,
  dbFlag,
  durationFlag,
  formatFlag,
  iptablesBackendFlag,
  jsonFlag,
  nodesFlag,
  shareCpusFlag,
  warmupFlag,
} from './common-flags.js';
import { labRunOptions } from './lab-run-options.js';
import { followProgress, type LogStyle, logFlag } from './progress.js';
import { readScenarioFile } from './scenario-file.js';

export interface LabCommandOptions {
  nodes: number;
  durationSeconds: number;
  warmupSeconds: number;
  scenarioFile?: string;
  json: boolean;
  dbPath: string;
  agentWaitMs: number;
  proxy: LabProxyOptions;
  /** Shape node uplinks (tc tbf) to this rate and declare it as the link speed. */
  linkMbit?: number;
  shareCpus?: boolean;
  /** Report format (md unless --format or --json says otherwise) and the progress style on stderr. */
  format?: ReportFormat;
  log?: LogStyle;
  /** iptables/nftables: run a real NetworkPolicy enforcer (kube-router) for the scenario's policy conditions. */
  policyEnforcer?: boolean;
}

/**
 * Lab defaults: the study's whole matrix in 3 rounds each (2 s for load and
 * request/response, 1 s for bulk throughput, which settles within
 * milliseconds), so the run takes under three minutes on 2 cores. Two nodes:
 * no measurement uses a third, and with two each node has a core of its own
 * (lab/cpu-sets.ts), so client and server never share one across nodes. No
 * pause between rounds: a server port is reached through one destination only
 * (collector/runs/measure-phase.ts), so a round's TIME_WAIT sockets meet the
 * next round's SYNs with the same timestamp clock and accept them, and the
 * connections-refused guard would show it otherwise.
 */
export const LAB_DEFAULTS = {
  nodes: 2,
  durationSeconds: 2,
  throughputDurationSeconds: 1,
  warmupSeconds: 1,
  rounds: 3,
  roundSleepSeconds: 0,
} as const;

async function loadScenario(opts: LabCommandOptions): Promise<unknown> {
  const base: Record<string, unknown> = opts.scenarioFile
    ? await readScenarioFile(opts.scenarioFile)
    : { name: 'lab default' };
  const throughput =
    opts.durationSeconds === LAB_DEFAULTS.durationSeconds
      ? { throughputDurationSeconds: LAB_DEFAULTS.throughputDurationSeconds }
      : {};
  const scenario = {
    durationSeconds: opts.durationSeconds,
    ...throughput,
    warmupSeconds: opts.warmupSeconds,
    rounds: LAB_DEFAULTS.rounds,
    roundSleepSeconds: LAB_DEFAULTS.roundSleepSeconds,
    ...base,
  };
  // Refused before a lab is built: a bad field costs no namespaces.
  parseScenario(scenario, process.env);
  return scenario;
}

/** Returns the process exit code: 0 succeeded, 1 run failed, 130/143 interrupted. */
export async function labCommand(opts: LabCommandOptions, log: Logger): Promise<number> {
  const interrupts = trapInterrupts(log);
  try {
    const scenario = await loadScenario(opts);
    const model = await runInLab(
      { ...opts, watch: (read) => followProgress(read, { style: opts.log ?? 'auto' }) },
      scenario,
      log,
      interrupts.signal,
    );
    // The whole command's wall time, lab set-up and teardown included (runInLab has torn the lab down by now).
    const wall = `Wall time of this command: ${process.uptime().toFixed(1)} s (lab set-up, run and teardown).\n`;
    if (model && opts.format && opts.format !== 'md' && opts.format !== 'json')
      process.stdout.write(renderReport(model, opts.format).body);
    else if (model)
      process.stdout.write(
        opts.json || opts.format === 'json'
          ? `${JSON.stringify({ ...model, commandWallSeconds: Number(process.uptime().toFixed(1)) }, null, 2)}\n`
          : `${renderMarkdown(model)}\n${wall}`,
      );
    if (interrupts.received()) return exitCodeFor(interrupts.received());
    return model?.run.state === 'succeeded' ? 0 : 1;
  } catch (err) {
    if (interrupts.received()) return exitCodeFor(interrupts.received());
    throw err;
  } finally {
    interrupts.dispose();
  }
}

/** --dataplane when given, else --proxy-mode. */
function dataplaneOf(v: {
  dataplane: string;
  'proxy-mode': ProxyMode;
  'iptables-backend': 'legacy' | 'nft';
}): LabProxyOptions {
  return dataplaneProxy((v.dataplane || v['proxy-mode']) as LabDataplane, { iptablesBackend: v['iptables-backend'] });
}

const flags = {
  nodes: nodesFlag(LAB_DEFAULTS.nodes),
  duration: durationFlag(LAB_DEFAULTS.durationSeconds),
  warmup: warmupFlag(LAB_DEFAULTS.warmupSeconds),
  scenario: stringFlag({
    help: 'scenario file (JSON, or YAML when it ends .yaml/.yml; schema: docs/scenario.schema.json); its fields override the lab defaults',
    value: 'FILE',
    default: undefined,
  }),
  json: jsonFlag,
  format: formatFlag,
  log: logFlag,
  db: dbFlag,
  dataplane: oneOfFlag<'' | LabDataplane>(LAB_DATAPLANES, {
    help: "the lab's dataplane: kube-proxy's iptables or nftables rules written by the lab (as --proxy-mode); the real kube-proxy v1.37, one process per node, in iptables or nftables mode (kube-proxy-iptables, kube-proxy-nftables); or real Cilium with kube-proxy replacement, native routing (cilium) or its VXLAN tunnel (cilium-vxlan). The real kube-proxy and Cilium run on the lab's own apiserver (both need 'bash scripts/setup.sh --cilium', which builds the control plane and kube-proxy too); wins over --proxy-mode",
    default: '',
  }),
  'proxy-mode': oneOfFlag<ProxyMode>(PROXY_MODES, {
    help: 'which kube-proxy mode the lab programs',
    default: 'iptables',
  }),
  'iptables-backend': iptablesBackendFlag,
  'link-mbit': numberFlag({
    help: "shape every node's uplink to this rate (tc tbf) and declare it as the link speed",
    value: 'N',
    default: undefined,
    min: 1,
  }),
  'share-cpus': shareCpusFlag,
  'policy-enforcer': switchFlag({
    help: "iptables/nftables dataplanes: run a real NetworkPolicy enforcer (kube-router's policy controller, built by scripts/build-kube-network-policies.sh) on the lab's own apiserver, for the scenario's networkPolicy and policyCount conditions (Cilium enforces policy itself)",
  }),
  'agent-wait': agentWaitFlag,
};

function options(v: FlagValues<typeof flags>): LabCommandOptions {
  return {
    ...labRunOptions(v),
    ...(v.scenario ? { scenarioFile: v.scenario } : {}),
    policyEnforcer: v['policy-enforcer'],
    ...(v['link-mbit'] !== undefined ? { linkMbit: v['link-mbit'] } : {}),
    proxy: dataplaneOf(v),
  };
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench lab',
    summary:
      "Runs the study's measurements in a network-namespace lab on this machine (one namespace per node, real kube-proxy rules, one agent per node, the collector in this process), prints the report and removes the lab. Needs root.",
    flags,
    subcommands: [
      { name: 'sweep', summary: 'the Service scale sweep, once per dataplane' },
      { name: 'study', summary: 'the reference study: matrix and Service sweep per dataplane, one comparison' },
      { name: 'monitor', summary: 'monitoring mode: peer probes and dataplane gauges' },
      { name: 'cleanup', summary: 'remove namespaces and processes of labs that were killed' },
    ],
    env: [
      { name: 'IPERF_DURATION', help: 'seconds per throughput measurement (overrides the scenario)' },
      { name: 'FORTIO_DURATION', help: 'seconds per HTTP and request/response measurement (overrides the scenario)' },
      { name: 'ROUNDS', help: 'measured rounds per measurement (overrides the scenario)' },
      { name: 'ROUND_SLEEP', help: 'seconds between rounds (overrides the scenario)' },
      { name: 'CNI_BENCH_LOG_LEVEL', help: 'debug, info, warn or error (logs go to stderr)' },
    ],
    examples: [
      'cni-bench lab',
      'cni-bench lab --nodes 2 --proxy-mode nftables --json > report.json',
      'cni-bench lab --dataplane cilium',
      'cni-bench lab --dataplane kube-proxy-nftables',
    ],
    notes: ['Exit codes: 0 the run succeeded, 1 it failed, 2 bad flags, 130/143 interrupted (SIGINT/SIGTERM).'],
  },
  run: (values, _positionals, ctx) => labCommand(options(values), ctx.log),
});
