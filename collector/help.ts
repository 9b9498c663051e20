/**
 * `cni-bench-collector --help`: every flag with its environment variable,
 * default and a line of help, the defaults read from the config schema itself
 * so they cannot drift from what the collector uses.
 */
import { configHelpText } from '../core/flags.js';
import { COLLECTOR_ENV, COLLECTOR_FLAGS, collectorConfigSchema } from './config.js';

type Field = keyof typeof COLLECTOR_FLAGS;

const HELP: Readonly<Record<Field, [value: string, help: string]>> = {
  grpcListen: [
    'ADDR',
    'gRPC listen address: host:port (port 0 picks one) or unix:/path; beyond loopback needs a token and TLS',
  ],
  httpHost: ['HOST', 'REST and /metrics listen host; beyond loopback needs a token and TLS'],
  httpPort: ['PORT', 'REST and /metrics port (0 picks one)'],
  dbPath: ['FILE', "SQLite store of runs; ':memory:' keeps nothing"],
  heartbeatIntervalMs: ['MS', 'how often agents send a heartbeat (told at registration)'],
  livenessTimeoutMs: ['MS', 'an agent silent this long is declared lost and its jobs fail'],
  tlsCertFile: ['FILE', 'PEM server certificate for gRPC; with --tls-key-file turns TLS on'],
  tlsKeyFile: ['FILE', 'PEM key of the server certificate'],
  tlsCaFile: ['FILE', 'PEM CA that signs agent certificates; set, agents must present one (mTLS)'],
  restTokenFile: [
    'FILE',
    "the operator's bearer token: every /v1/* request and RunService/MonitorService call must carry it (or an operator certificate); unset leaves them open",
  ],
  restTls: ['true|false', "serve REST over TLS with the collector's certificate"],
  agentKeyFile: [
    'FILE',
    "secret (32+ bytes) node tokens derive from; set, every agent must present its own node's token or certificate",
  ],
  agentTokenReview: [
    'true|false',
    "verify agents' projected ServiceAccount tokens with TokenReview, bound to their pod's node",
  ],
  agentServiceAccount: ['NS/NAME', 'the ServiceAccount agents run as; reviewed tokens of any other are refused'],
  insecure: ['true|false', 'allow listening beyond loopback without a token and TLS (a fenced lab only)'],
  kubeconfig: ['FILE', 'kubeconfig for a cluster reached from outside; unset: in-cluster or none'],
  namespace: ['NS', "the collector's own namespace"],
  sweepNamespace: ['NS', 'namespace the scale sweep creates its Services in'],
  agentSelector: ['SELECTOR', 'label selector of the agent pods'],
  kubernetes: ['auto|off|in-cluster|kubeconfig', 'how to reach the Kubernetes API'],
  kubeQps: ['N', 'client-side API requests per second'],
  kubeBurst: ['N', 'client-side API burst'],
  kubeParallelism: ['N', 'API requests in flight during a sweep'],
  ciliumNamespace: ['NS', "namespace of Cilium's cilium-config ConfigMap"],
  allowCiliumConfigChange: [
    'true|false',
    'raise bpf-lb-map-max for a sweep that would overflow it (and restore it after)',
  ],
  allowNetworkPolicy: [
    'true|false',
    "create NetworkPolicies in the collector's namespace for a scenario's policy conditions (and delete them)",
  ],
  allowCiliumNetworkPolicy: [
    'true|false',
    "create a CiliumNetworkPolicy with an HTTP rule in the collector's namespace for a scenario's l7Policy condition (and delete it)",
  ],
  allowDataplaneRestart: [
    'true|false',
    "delete the client node's dataplane agent pod (kube-proxy, cilium-agent) for a disruption phase's dataplane-restart, and wait for its DaemonSet's new pod",
  ],
  dataplaneNamespace: ['NS', 'namespace of the dataplane agent pods'],
  dataplaneSelector: ['SELECTOR', "label selector of the dataplane DaemonSet's pods"],
};

export function collectorHelp(): string {
  return configHelpText({
    help: HELP,
    flag: (field) => COLLECTOR_FLAGS[field],
    env: COLLECTOR_ENV,
    shape: collectorConfigSchema.shape,
    spec: {
      usage: 'cni-bench-collector',
      summary:
        'The cni-bench collector: coordinates the agents, runs scenarios and sweeps, stores runs, serves gRPC and REST (/v1/runs, /v1/monitor), exports Prometheus metrics and writes reports. Flags win over environment variables.',
      examples: [
        'cni-bench-collector --db /var/lib/cni-bench/collector.db --kubernetes in-cluster',
        'cni-bench-collector --kubernetes off --grpc-listen 127.0.0.1:7070 --http-port 8080 --db :memory:',
      ],
      notes: ['Exit codes: 0 stopped by SIGTERM/SIGINT, 1 a failed shutdown, 2 bad configuration or a failed start.'],
    },
  });
}
