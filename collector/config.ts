/**
 * The collector's configuration: one schema with defaults beside each field,
 * read once from flags over environment into a frozen object.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { parseWith } from '../core/validate.js';

/** A Kubernetes namespace name (RFC 1123 label). */
const namespaceName = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a lowercase RFC 1123 label');

export const collectorConfigSchema = z
  .strictObject({
    /** gRPC listen address: host:port (port 0 picks one) or unix:/path. Loopback unless told otherwise. */
    grpcListen: z.string().min(1).max(4096).default('127.0.0.1:7070'),
    /** REST + /metrics listen host and port (port 0 picks one). Loopback unless told otherwise. */
    httpHost: z.string().min(1).max(255).default('127.0.0.1'),
    httpPort: z.coerce.number().int().min(0).max(65535).default(8080),
    /** SQLite file; ':memory:' keeps nothing. */
    dbPath: z.string().min(1).default('/var/lib/cni-bench/collector.db'),
    heartbeatIntervalMs: z.coerce.number().int().min(100).default(2000),
    /** An agent silent this long is declared lost and its jobs fail. */
    livenessTimeoutMs: z.coerce.number().int().min(500).default(10_000),
    /** PEM server certificate and key for gRPC; both set turns TLS on, neither leaves gRPC plaintext. */
    tlsCertFile: z.string().default(''),
    tlsKeyFile: z.string().default(''),
    /** PEM CA that signs agent certificates; set, agents must present one (mTLS). */
    tlsCaFile: z.string().default(''),
    /** File holding the operator's bearer token: every /v1/* REST request and every RunService/MonitorService call must carry it (or an operator certificate); '' leaves them open. */
    restTokenFile: z.string().default(''),
    /** Serve REST over TLS with tlsCertFile and tlsKeyFile. */
    restTls: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /** Secret key node tokens are derived from (agent/auth: nodeToken); set, every agent must present its own node's token or certificate. */
    agentKeyFile: z.string().default(''),
    /** Verify agents' projected ServiceAccount tokens with the TokenReview API and bind each to its pod's node (needs Kubernetes). */
    agentTokenReview: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /** The ServiceAccount agents run as (namespace/name); a reviewed token of any other account is refused. */
    agentServiceAccount: z.string().max(317).default(''),
    /** Allow listening beyond loopback without an operator token and TLS (a lab behind its own fence; never in a shared network). */
    insecure: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /** kubeconfig for talking to the cluster from outside it; '' means in-cluster or none. */
    kubeconfig: z.string().default(''),
    /** The collector's own namespace (downward API metadata.namespace in a cluster). */
    namespace: namespaceName.default('cni-bench'),
    /** Namespace the collector creates sweep workloads in, so cleanup can delete all of it. */
    sweepNamespace: namespaceName.default('cni-bench-sweep'),
    /** Label selector that finds the agent pods. */
    agentSelector: z.string().min(1).default('app.kubernetes.io/name=cni-bench-agent'),
    /** How to reach the Kubernetes API: the service account ('in-cluster'), the kubeconfig file, whichever is there ('auto'), or not at all ('off'). */
    kubernetes: z.enum(['auto', 'off', 'in-cluster', 'kubeconfig']).default('auto'),
    /** Client-side limits on API calls (like client-go's QPS and burst) and requests in flight during a sweep. */
    kubeQps: z.coerce.number().positive().max(10_000).default(50),
    kubeBurst: z.coerce.number().int().min(1).max(10_000).default(100),
    kubeParallelism: z.coerce.number().int().min(1).max(256).default(16),
    /** Namespace of Cilium's cilium-config ConfigMap (read for the scale sweep's LB map preflight). */
    ciliumNamespace: namespaceName.default('kube-system'),
    /** Raise bpf-lb-map-max when a sweep would overflow it (and put it back afterwards); off: refuse with the fix. */
    allowCiliumConfigChange: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /** Create NetworkPolicies in the collector's namespace for a scenario's policy conditions (and delete them); off: refuse with the chart value. */
    allowNetworkPolicy: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /** Create a CiliumNetworkPolicy with an HTTP rule in the collector's namespace for a scenario's l7Policy condition (and delete it); off: refuse with the chart value. */
    allowCiliumNetworkPolicy: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /** Delete the client node's dataplane agent pod for a disruption phase's dataplane-restart; off: refuse with the chart value. */
    allowDataplaneRestart: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /** Namespace of the dataplane agent pods (kube-proxy, cilium-agent). */
    dataplaneNamespace: namespaceName.default('kube-system'),
    /** Label selector of the dataplane DaemonSet's pods. */
    dataplaneSelector: z.string().min(1).max(1024).default('k8s-app in (kube-proxy,cilium)'),
  })
  .superRefine((c, ctx) => {
    if (c.tlsCertFile && !c.tlsKeyFile)
      ctx.addIssue({ code: 'custom', path: ['tlsKeyFile'], message: 'required when tlsCertFile is set' });
    if (c.tlsKeyFile && !c.tlsCertFile)
      ctx.addIssue({ code: 'custom', path: ['tlsCertFile'], message: 'required when tlsKeyFile is set' });
    if (c.tlsCaFile && !(c.tlsCertFile && c.tlsKeyFile)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tlsCaFile'],
        message: 'verifying agent certificates needs TLS: set tlsCertFile and tlsKeyFile',
      });
    }
    if (c.restTls && !c.tlsCertFile)
      ctx.addIssue({ code: 'custom', path: ['restTls'], message: 'needs tlsCertFile and tlsKeyFile' });
    if (c.agentTokenReview && c.kubernetes === 'off')
      ctx.addIssue({ code: 'custom', path: ['agentTokenReview'], message: 'needs Kubernetes (kubernetes is off)' });
    if (!c.insecure) {
      const exposed = [
        !isLoopbackListen(c.grpcListen) && 'grpcListen',
        !isLoopbackHost(c.httpHost) && 'httpHost',
      ].filter((x): x is string => Boolean(x));
      for (const field of exposed) {
        const missing = [!c.restTokenFile && 'restTokenFile', !c.tlsCertFile && 'tlsCertFile']
          .filter(Boolean)
          .join(' and ');
        if (missing)
          ctx.addIssue({
            code: 'custom',
            path: [field],
            message: `listening beyond loopback needs ${missing} (or insecure=true for a fenced lab)`,
          });
      }
    }
  });

/** A host the kernel keeps on this machine: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** A gRPC listen address that only this machine reaches: a unix socket or a loopback host. */
export function isLoopbackListen(listen: string): boolean {
  if (listen.startsWith('unix:')) return true;
  const m = /^(.*):(\d+)$/.exec(listen);
  return m ? isLoopbackHost(m[1]!) : false;
}

export type CollectorConfig = Readonly<z.output<typeof collectorConfigSchema>>;

export function collectorConfig(input: z.input<typeof collectorConfigSchema>): CollectorConfig {
  return parseWith(collectorConfigSchema, input, 'collector config');
}

/**
 * Reads a file a config field names, at start-up, so a bad mount fails the
 * collector at once with the field and path rather than at the first request.
 */
export function readConfigFile(field: keyof CollectorConfig, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `invalid collector config: ${field}: cannot read '${path}' (${(err as Error).message})`,
      {
        cause: err,
        details: { field, path, issues: [{ path: field, message: `cannot read '${path}'` }] },
      },
    );
  }
}

/** The environment variables the collector reads, by config field (manifests are checked against this list). */
export const COLLECTOR_ENV = {
  grpcListen: 'CNI_BENCH_GRPC_LISTEN',
  httpHost: 'CNI_BENCH_HTTP_HOST',
  httpPort: 'CNI_BENCH_HTTP_PORT',
  dbPath: 'CNI_BENCH_DB',
  heartbeatIntervalMs: 'CNI_BENCH_HEARTBEAT_INTERVAL_MS',
  livenessTimeoutMs: 'CNI_BENCH_LIVENESS_TIMEOUT_MS',
  tlsCertFile: 'CNI_BENCH_TLS_CERT_FILE',
  tlsKeyFile: 'CNI_BENCH_TLS_KEY_FILE',
  tlsCaFile: 'CNI_BENCH_TLS_CA_FILE',
  restTokenFile: 'CNI_BENCH_REST_TOKEN_FILE',
  restTls: 'CNI_BENCH_REST_TLS',
  agentKeyFile: 'CNI_BENCH_AGENT_KEY_FILE',
  agentTokenReview: 'CNI_BENCH_AGENT_TOKEN_REVIEW',
  agentServiceAccount: 'CNI_BENCH_AGENT_SERVICE_ACCOUNT',
  insecure: 'CNI_BENCH_INSECURE',
  kubeconfig: 'CNI_BENCH_KUBECONFIG',
  namespace: 'CNI_BENCH_NAMESPACE',
  sweepNamespace: 'CNI_BENCH_SWEEP_NAMESPACE',
  agentSelector: 'CNI_BENCH_AGENT_SELECTOR',
  kubernetes: 'CNI_BENCH_KUBERNETES',
  kubeQps: 'CNI_BENCH_KUBE_QPS',
  kubeBurst: 'CNI_BENCH_KUBE_BURST',
  kubeParallelism: 'CNI_BENCH_KUBE_PARALLELISM',
  ciliumNamespace: 'CNI_BENCH_CILIUM_NAMESPACE',
  allowCiliumConfigChange: 'CNI_BENCH_ALLOW_CILIUM_CONFIG_CHANGE',
  allowNetworkPolicy: 'CNI_BENCH_ALLOW_NETWORK_POLICY',
  allowCiliumNetworkPolicy: 'CNI_BENCH_ALLOW_CILIUM_NETWORK_POLICY',
  allowDataplaneRestart: 'CNI_BENCH_ALLOW_DATAPLANE_RESTART',
  dataplaneNamespace: 'CNI_BENCH_DATAPLANE_NAMESPACE',
  dataplaneSelector: 'CNI_BENCH_DATAPLANE_SELECTOR',
} as const satisfies Partial<Record<keyof CollectorConfig, string>>;

/** Flag name by config field; every field in COLLECTOR_ENV has one. */
export const COLLECTOR_FLAGS = {
  grpcListen: 'grpc-listen',
  httpHost: 'http-host',
  httpPort: 'http-port',
  dbPath: 'db',
  heartbeatIntervalMs: 'heartbeat-interval-ms',
  livenessTimeoutMs: 'liveness-timeout-ms',
  tlsCertFile: 'tls-cert-file',
  tlsKeyFile: 'tls-key-file',
  tlsCaFile: 'tls-ca-file',
  restTokenFile: 'rest-token-file',
  restTls: 'rest-tls',
  agentKeyFile: 'agent-key-file',
  agentTokenReview: 'agent-token-review',
  agentServiceAccount: 'agent-service-account',
  insecure: 'insecure',
  kubeconfig: 'kubeconfig',
  namespace: 'namespace',
  sweepNamespace: 'sweep-namespace',
  agentSelector: 'agent-selector',
  kubernetes: 'kubernetes',
  kubeQps: 'kube-qps',
  kubeBurst: 'kube-burst',
  kubeParallelism: 'kube-parallelism',
  ciliumNamespace: 'cilium-namespace',
  allowCiliumConfigChange: 'allow-cilium-config-change',
  allowNetworkPolicy: 'allow-network-policy',
  allowCiliumNetworkPolicy: 'allow-cilium-network-policy',
  allowDataplaneRestart: 'allow-dataplane-restart',
  dataplaneNamespace: 'dataplane-namespace',
  dataplaneSelector: 'dataplane-selector',
} as const satisfies Record<keyof typeof COLLECTOR_ENV, string>;

/** Reads flags (`--grpc-listen`, `--tls-cert-file`, ...) over environment (`CNI_BENCH_GRPC_LISTEN`, ...). */
export function loadCollectorConfig(argv: string[], env: NodeJS.ProcessEnv): CollectorConfig {
  const fields = Object.keys(COLLECTOR_FLAGS) as (keyof typeof COLLECTOR_FLAGS)[];
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: Object.fromEntries(fields.map((f) => [COLLECTOR_FLAGS[f], { type: 'string' as const }])),
  });
  const raw: Record<string, string> = {};
  for (const f of fields) {
    const v = (values[COLLECTOR_FLAGS[f]] as string | undefined) ?? env[COLLECTOR_ENV[f]];
    if (v !== undefined) raw[f] = v;
  }
  return parseWith(collectorConfigSchema, raw, 'collector config');
}
