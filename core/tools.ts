/**
 * Facts about tools that agent and collector must agree on, as the lookups
 * their code reads, all derived from the tool catalogue (core/tool-catalogue/):
 * which ship inside the agent, which server each client talks to, where
 * servers listen, and how many cores a server can use at most.
 */
import { CLIENTS, SERVERS, TOOLS } from './tool-catalogue/index.js';

/** Tools that ship inside the agent (no binary on the node). */
export const BUILTIN_TOOLS: ReadonlySet<string> = new Set(TOOLS.filter((t) => t.builtIn).map((t) => t.name));

/** Client tool -> the server tool it talks to (HTTP clients take the scenario's server instead). */
export const SERVER_TOOL_OF: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(CLIENTS.flatMap((t) => (t.client.serverTool ? [[t.name, t.client.serverTool]] : []))),
);

/** Where each server listens (pod or host network) and the port its Service exposes. */
export const SERVER_PORTS: Readonly<Record<string, { port: number; servicePort: number }>> = Object.freeze(
  Object.fromEntries(
    SERVERS.map((t) => [t.name, Object.freeze({ port: t.server.port, servicePort: t.server.servicePort })]),
  ),
);

/**
 * Ports a server's clients connect to beside its SERVER_PORTS one (netserver's
 * data connection). A Service fronts one port, so the plan does not pick such
 * a tool for the 'service' path.
 */
export const SERVER_DATA_PORTS: Readonly<Record<string, number>> = Object.freeze(
  Object.fromEntries(SERVERS.flatMap((t) => (t.server.dataPort !== undefined ? [[t.name, t.server.dataPort]] : []))),
);

/** Servers that run one thread of work (their saturation point is one core); others use every core. */
export const SINGLE_THREADED_SERVERS: ReadonlySet<string> = new Set(
  SERVERS.filter((t) => t.server.singleThreaded).map((t) => t.name),
);

/** Agent label that marks the second agent of a node (same-node measurements). */
export const PEER_ROLE_LABEL = 'cni-bench.io/role';
