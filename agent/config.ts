/**
 * The agent's configuration: one schema, defaults beside each field, read once
 * from flags and environment (flags win) into a frozen object.
 */
import { readFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { parseArgs } from 'node:util';
import { CniBenchError, ErrorCodes, type FieldIssue, validationError } from '../core/errors.js';
import { type FieldsOutput, fields as f, readFields } from '../core/fields.js';
import { DEFAULT_PROCESS_NAMES } from './samplers/process-sampler.js';

/** The agent's config fields (core/fields.ts, not zod: the agent keeps within its memory budget). */
export const agentConfigShape = {
  /** host:port, or unix:/path for the lab's control socket. */
  collector: f.string({ min: 1 }),
  nodeName: f.string({ min: 1 }),
  /** Unique among agents (default: the node name); a node's second, same-node agent needs its own. */
  agentName: f.optionalString({ min: 1, max: 253 }),
  podName: f.string({ min: 1 }),
  podIp: f.string({ default: '' }),
  hostIp: f.string({ default: '' }),
  /** Network namespace of the node (host side): '' reads the agent's own; /proc/1/ns/net with hostPID in a cluster. */
  hostNetns: f.string({ default: '' }),
  /** Port of the /healthz endpoint; 0 turns it off. */
  healthPort: f.number({ int: true, min: 0, max: 65535, default: 8477 }),
  /** Messages kept until acknowledged; at most the collector's sequence window (SEQ_WINDOW), so a gap from drops is never refused. */
  outboxLimit: f.number({ int: true, min: 1, max: 1_000_000, default: 10_000 }),
  labels: f.stringMap({ default: {} }),
  /** Dataplane processes whose CPU and memory are sampled from /proc (comm names). */
  processNames: f.strings({ min: 1, item: { min: 1, max: 64 }, default: [...DEFAULT_PROCESS_NAMES] }),
  /** Reconnect backoff bounds. */
  backoffBaseMs: f.number({ int: true, min: 1, default: 100 }),
  backoffMaxMs: f.number({ int: true, min: 1, default: 2000 }),
  /** PEM CA that signs the collector's certificate; set, the link uses TLS, otherwise plaintext. */
  tlsCaFile: f.string({ default: '' }),
  /** PEM client certificate and key the agent presents when the collector asks (mTLS). */
  tlsCertFile: f.string({ default: '' }),
  tlsKeyFile: f.string({ default: '' }),
  /** Name to verify the collector's certificate against instead of the address host. */
  tlsServerName: f.string({ default: '' }),
  /** The agent's identity for the collector: a node token, or a projected ServiceAccount token (read again before every registration, as the kubelet rotates it). */
  tokenFile: f.string({ default: '' }),
  /** Continuous monitoring (agent/monitor/): peer probes and dataplane gauges between runs. */
  monitor: f.boolean({ default: false }),
  /** Seconds between probe rounds; each round is jittered by `monitorJitter`. */
  monitorIntervalS: f.number({ min: 0.5, max: 3600, default: 30 }),
  /** Peers probed per round, chosen by the collector by consistent hashing over node names. */
  monitorPeers: f.number({ int: true, min: 1, max: 1000, default: 10 }),
  /** Fraction by which a round's start may move either way, so agents do not probe in step. */
  monitorJitter: f.number({ min: 0, max: 0.5, default: 0.1 }),
  /** Per-probe timeout; 0 picks min(3 s, 30% of the interval). */
  monitorTimeoutMs: f.number({ int: true, min: 0, max: 60_000, default: 0 }),
  /** TCP port of the probe responders (pod and host network namespace). */
  monitorPort: f.number({ int: true, min: 1, max: 65535, default: 8478 }),
  /** Run a responder in the host network namespace too (pod-to-host probes); needs hostNetns. */
  monitorHostProbes: f.boolean({ default: true }),
  /** BPF maps (name prefixes) whose entries are counted for a fill ratio, besides Cilium's LB service map. */
  monitorBpfMaps: f.strings({ max: 32, item: { min: 1, max: 15 }, default: [] }),
};

export type AgentConfig = FieldsOutput<typeof agentConfigShape>;

/** Checks across fields, each naming the field at fault. */
function crossCheck(c: AgentConfig): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (c.monitor && c.monitorPort === c.healthPort)
    issues.push({ path: 'monitorPort', message: `must differ from healthPort (${c.healthPort})` });
  if (c.monitorTimeoutMs > c.monitorIntervalS * 300) {
    issues.push({
      path: 'monitorTimeoutMs',
      message: `must be at most 30% of monitorIntervalS (${c.monitorIntervalS * 300} ms), so a round's probes end before the next`,
    });
  }
  if (c.tlsCertFile && !c.tlsKeyFile) issues.push({ path: 'tlsKeyFile', message: 'required when tlsCertFile is set' });
  if (c.tlsKeyFile && !c.tlsCertFile) issues.push({ path: 'tlsCertFile', message: 'required when tlsKeyFile is set' });
  // Without a CA the link is plaintext: a client certificate or server name would be silently ignored.
  if (!c.tlsCaFile && (c.tlsCertFile || c.tlsServerName)) {
    issues.push({
      path: 'tlsCaFile',
      message: `required when ${c.tlsCertFile ? 'tlsCertFile' : 'tlsServerName'} is set (TLS needs the CA)`,
    });
  }
  return issues;
}

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
  return text === undefined
    ? undefined
    : text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
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
  tlsCaFile: 'CNI_BENCH_TLS_CA_FILE',
  tlsCertFile: 'CNI_BENCH_TLS_CERT_FILE',
  tlsKeyFile: 'CNI_BENCH_TLS_KEY_FILE',
  tlsServerName: 'CNI_BENCH_TLS_SERVER_NAME',
  tokenFile: 'CNI_BENCH_TOKEN_FILE',
  monitor: 'CNI_BENCH_MONITOR',
  monitorIntervalS: 'CNI_BENCH_MONITOR_INTERVAL_S',
  monitorPeers: 'CNI_BENCH_MONITOR_PEERS',
  monitorJitter: 'CNI_BENCH_MONITOR_JITTER',
  monitorTimeoutMs: 'CNI_BENCH_MONITOR_TIMEOUT_MS',
  monitorPort: 'CNI_BENCH_MONITOR_PORT',
  monitorHostProbes: 'CNI_BENCH_MONITOR_HOST_PROBES',
  monitorBpfMaps: 'CNI_BENCH_MONITOR_BPF_MAPS',
} as const;

/** The probe timeout a config implies (monitorTimeoutMs, or its automatic value). */
export function monitorTimeoutMs(c: Pick<AgentConfig, 'monitorTimeoutMs' | 'monitorIntervalS'>): number {
  return c.monitorTimeoutMs || Math.min(3000, Math.round(c.monitorIntervalS * 300));
}

/**
 * Reads a file a config field names, at start-up, so a bad mount stops the
 * agent at once with the field and path instead of a reconnect loop.
 */
export function readConfigFile(field: keyof AgentConfig, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `invalid agent config: ${field}: cannot read '${path}' (${(err as Error).message})`,
      {
        cause: err,
        details: { field, path, issues: [{ path: field, message: `cannot read '${path}'` }] },
      },
    );
  }
}

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
      'tls-ca-file': { type: 'string' },
      'tls-cert-file': { type: 'string' },
      'tls-key-file': { type: 'string' },
      'tls-server-name': { type: 'string' },
      'token-file': { type: 'string' },
      monitor: { type: 'boolean' },
      'monitor-interval-s': { type: 'string' },
      'monitor-peers': { type: 'string' },
      'monitor-jitter': { type: 'string' },
      'monitor-timeout-ms': { type: 'string' },
      'monitor-port': { type: 'string' },
      'monitor-host-probes': { type: 'string' },
      'monitor-bpf-maps': { type: 'string' },
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
    tlsCaFile: values['tls-ca-file'] ?? env[AGENT_ENV.tlsCaFile],
    tlsCertFile: values['tls-cert-file'] ?? env[AGENT_ENV.tlsCertFile],
    tlsKeyFile: values['tls-key-file'] ?? env[AGENT_ENV.tlsKeyFile],
    tlsServerName: values['tls-server-name'] ?? env[AGENT_ENV.tlsServerName],
    tokenFile: values['token-file'] ?? env[AGENT_ENV.tokenFile],
    monitor: values.monitor === undefined ? env[AGENT_ENV.monitor] : String(values.monitor),
    monitorIntervalS: values['monitor-interval-s'] ?? env[AGENT_ENV.monitorIntervalS],
    monitorPeers: values['monitor-peers'] ?? env[AGENT_ENV.monitorPeers],
    monitorJitter: values['monitor-jitter'] ?? env[AGENT_ENV.monitorJitter],
    monitorTimeoutMs: values['monitor-timeout-ms'] ?? env[AGENT_ENV.monitorTimeoutMs],
    monitorPort: values['monitor-port'] ?? env[AGENT_ENV.monitorPort],
    monitorHostProbes: values['monitor-host-probes'] ?? env[AGENT_ENV.monitorHostProbes],
    monitorBpfMaps: listOf(values['monitor-bpf-maps'] ?? env[AGENT_ENV.monitorBpfMaps]),
  };
  return readFields(agentConfigShape, raw, 'agent config', crossCheck);
}
