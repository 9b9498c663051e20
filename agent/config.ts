/**
 * The agent's configuration: one schema, defaults beside each field, read once
 * from flags and environment (flags win) into a frozen object.
 */
import { hostname, networkInterfaces } from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { validationError } from '../core/errors.js';
import { parseWith } from '../core/validate.js';
import { DEFAULT_PROCESS_NAMES } from './samplers/process-sampler.js';

const schema = z.strictObject({
  /** host:port, or unix:/path for the lab's control socket. */
  collector: z.string().min(1),
  nodeName: z.string().min(1),
  /** Unique among agents (default: the node name); a node's second, same-node agent needs its own. */
  agentName: z.string().min(1).max(253).optional(),
  podName: z.string().min(1),
  podIp: z.string().default(''),
  hostIp: z.string().default(''),
  /** Network namespace of the node (host side): '' reads the agent's own; /proc/1/ns/net with hostPID in a cluster. */
  hostNetns: z.string().default(''),
  /** Port of the /healthz endpoint; 0 turns it off. */
  healthPort: z.coerce.number().int().min(0).max(65535).default(8477),
  outboxLimit: z.coerce.number().int().min(1).default(10_000),
  labels: z.record(z.string(), z.string()).default({}),
  /** Dataplane processes whose CPU and memory are sampled from /proc (comm names). */
  processNames: z.array(z.string().min(1).max(64)).min(1).default([...DEFAULT_PROCESS_NAMES]),
  /** Reconnect backoff bounds. */
  backoffBaseMs: z.coerce.number().int().min(1).default(100),
  backoffMaxMs: z.coerce.number().int().min(1).default(2000),
});

export type AgentConfig = Readonly<z.output<typeof schema>>;

function firstIpv4(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '';
}

function parseLabels(items: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items ?? []) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw validationError([{ path: 'labels', message: `'${item}' is not key=value` }], 'agent config');
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

/** "a,b,c" into a list; undefined keeps the default. */
function listOf(text: string | undefined): string[] | undefined {
  return text === undefined ? undefined : text.split(',').map((s) => s.trim()).filter(Boolean);
}

/** The environment variables the agent reads, by config field (manifests are checked against this list). */
export const AGENT_ENV = {
  collector: 'CNI_BENCH_COLLECTOR',
  nodeName: 'NODE_NAME',
  agentName: 'CNI_BENCH_AGENT_NAME',
  podName: 'POD_NAME',
  podIp: 'POD_IP',
  hostIp: 'HOST_IP',
  hostNetns: 'CNI_BENCH_HOST_NETNS',
  healthPort: 'CNI_BENCH_HEALTH_PORT',
  outboxLimit: 'CNI_BENCH_OUTBOX_LIMIT',
  processNames: 'CNI_BENCH_PROCESS_NAMES',
} as const;

/** Reads flags (`--collector`, `--node-name`, ...) over environment (`CNI_BENCH_COLLECTOR`, `NODE_NAME`, ...). */
export function loadAgentConfig(argv: string[], env: NodeJS.ProcessEnv): AgentConfig {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      collector: { type: 'string' },
      'node-name': { type: 'string' },
      'agent-name': { type: 'string' },
      'pod-name': { type: 'string' },
      'pod-ip': { type: 'string' },
      'host-ip': { type: 'string' },
      'host-netns': { type: 'string' },
      'health-port': { type: 'string' },
      'outbox-limit': { type: 'string' },
      label: { type: 'string', multiple: true },
      'process-names': { type: 'string' },
    },
  });
  const raw = {
    collector: values.collector ?? env[AGENT_ENV.collector],
    nodeName: values['node-name'] ?? env[AGENT_ENV.nodeName] ?? hostname(),
    agentName: values['agent-name'] ?? env[AGENT_ENV.agentName],
    podName: values['pod-name'] ?? env[AGENT_ENV.podName] ?? hostname(),
    podIp: values['pod-ip'] ?? env[AGENT_ENV.podIp] ?? firstIpv4(),
    hostIp: values['host-ip'] ?? env[AGENT_ENV.hostIp],
    hostNetns: values['host-netns'] ?? env[AGENT_ENV.hostNetns],
    healthPort: values['health-port'] ?? env[AGENT_ENV.healthPort],
    outboxLimit: values['outbox-limit'] ?? env[AGENT_ENV.outboxLimit],
    labels: parseLabels(values.label),
    processNames: listOf(values['process-names'] ?? env[AGENT_ENV.processNames]),
  };
  return parseWith(schema, raw, 'agent config');
}
