/**
 * `cni-bench-agent --help`: every flag with its environment variable, default
 * and a line of help, the defaults read from the config schema itself so they
 * cannot drift from what the agent uses.
 */
import { configHelpText, describedFlag } from '../core/flags.js';
import { AGENT_ENV, agentConfigShape } from './config.js';

type Field = keyof typeof AGENT_ENV;

const HELP: Readonly<Record<Field, [value: string, help: string]>> = {
  collector: ['ADDR', "the collector's gRPC address: host:port, or unix:/path (required)"],
  nodeName: ['NAME', 'the node this agent runs on (default: the host name)'],
  agentName: ['NAME', "unique among agents (default: the node name); a node's second agent needs its own"],
  podName: ['NAME', "the agent pod's name (default: the host name)"],
  podIp: ['IP', "the agent pod's IP (default: the first non-loopback IPv4)"],
  hostIp: ['IP', "the node's IP"],
  hostNetns: ['PATH', "the node's network namespace, e.g. /proc/1/ns/net with hostPID; empty: the agent's own"],
  healthPort: ['PORT', '/healthz and /metrics port; 0 turns it off'],
  outboxLimit: ['N', 'results and samples held while the collector is unreachable'],
  processNames: ['A,B', 'dataplane processes (comm names) whose CPU and memory are sampled'],
  tlsCaFile: ['FILE', "PEM CA that signs the collector's certificate; set, the link uses TLS"],
  tlsCertFile: ['FILE', 'PEM client certificate for mTLS'],
  tlsKeyFile: ['FILE', 'PEM key of the client certificate'],
  tlsServerName: ['NAME', "name to verify the collector's certificate against instead of the address host"],
  tokenFile: [
    'FILE',
    "the agent's identity: its node token or projected ServiceAccount token (read again before each registration)",
  ],
  monitor: ['', 'monitoring mode: probe peers and export dataplane gauges between runs'],
  monitorIntervalS: ['S', 'seconds between probe rounds'],
  monitorPeers: ['N', 'peers probed per round'],
  monitorJitter: ['X', "fraction by which a round's start may move either way"],
  monitorTimeoutMs: ['MS', 'per-probe timeout; 0: min(3 s, 30% of the interval)'],
  monitorPort: ['PORT', 'TCP port of the probe responders'],
  monitorHostProbes: ['true|false', 'also probe the host network namespace (needs --host-netns)'],
  monitorBpfMaps: ['A,B', 'BPF map name prefixes whose entries are counted for a fill ratio'],
};

export function agentHelp(): string {
  return configHelpText({
    help: HELP,
    flag: (field) => field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`),
    env: AGENT_ENV,
    shape: agentConfigShape,
    extra: {
      label: describedFlag({
        help: 'a label reported with the agent, key=value (repeatable)',
        value: 'K=V',
        default: undefined,
      }),
    },
    spec: {
      usage: 'cni-bench-agent',
      summary:
        "The cni-bench agent (one per node): runs load generators on the collector's command, serves as the far end for other agents, samples the dataplane and streams it all to the collector over gRPC. Flags win over environment variables.",
      examples: [
        'cni-bench-agent --collector cni-bench-collector:7070 --host-netns /proc/1/ns/net',
        'CNI_BENCH_COLLECTOR=unix:/run/cni-bench.sock cni-bench-agent --monitor',
      ],
      notes: ['Exit codes: 0 stopped by SIGTERM/SIGINT, 2 bad configuration or a failed start.'],
    },
  });
}
