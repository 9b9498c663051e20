/**
 * Facts about tools that agent and collector must agree on: which ship inside
 * the agent (no binary on the node), which server each client talks to, where
 * servers listen, and how many cores a server can use at most (for the
 * server-saturation guard).
 */
export const BUILTIN_TOOLS: ReadonlySet<string> = new Set(['http-echo', 'tcp-rr', 'tcp-echo', 'http-open-loop']);

/** Client tool -> the server tool it talks to (HTTP clients take the scenario's server instead). */
export const SERVER_TOOL_OF: Readonly<Record<string, string>> = Object.freeze({
  iperf3: 'iperf3',
  sockperf: 'sockperf',
  netperf: 'netserver',
  'fortio-tcp': 'fortio-tcp',
  'tcp-rr': 'tcp-echo',
});

/** Where each server listens (pod or host network) and the port its Service exposes. */
export const SERVER_PORTS: Readonly<Record<string, { port: number; servicePort: number }>> = Object.freeze({
  iperf3: { port: 5201, servicePort: 5201 },
  'http-echo': { port: 8080, servicePort: 80 },
  fortio: { port: 8081, servicePort: 80 },
  sockperf: { port: 11111, servicePort: 11111 },
  netserver: { port: 12865, servicePort: 12865 },
  'fortio-tcp': { port: 8078, servicePort: 8078 },
  'tcp-echo': { port: 8079, servicePort: 8079 },
});

/**
 * Ports a server's clients connect to beside its SERVER_PORTS one. netperf
 * opens a second, data connection to netserver on the port it names
 * (`-- -P ,12866`, fixed so firewalls and NetworkPolicies can allow it). A
 * Service fronts one port, so the plan does not pick such a tool for the
 * 'service' path.
 */
export const SERVER_DATA_PORTS: Readonly<Record<string, number>> = Object.freeze({
  netserver: 12866,
});

/** Servers that run one thread of work (their saturation point is one core); others use every core. netserver forks one single-threaded child per test. */
export const SINGLE_THREADED_SERVERS: ReadonlySet<string> = new Set(['iperf3', 'http-echo', 'tcp-echo', 'sockperf', 'netserver']);

/** Agent label that marks the second agent of a node (same-node measurements). */
export const PEER_ROLE_LABEL = 'cni-bench.io/role';
