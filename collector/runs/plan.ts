/**
 * Chooses where a run's servers and clients go, resolves each measurement's
 * 'auto' tools to the native tool the nodes have (built-in fallbacks only
 * where none is installed), and checks before anything starts that those
 * agents have every tool the scenario needs. Pure: it works on a snapshot of
 * the registry, so a refusal can be returned to the API caller.
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { binaryOf, type ClientFacts, clientsOf, findTool, orList, serversOf } from '../../core/tool-catalogue/index.js';
import { PEER_ROLE_LABEL, SERVER_TOOL_OF } from '../../core/tools.js';
import type { AgentEntry } from '../agents/registry.js';
import type { Scenario } from './scenario.js';

type ScenarioMeasurement = Scenario['measurements'][number];

/** A measurement with its tools resolved. */
export type PlannedMeasurement = ScenarioMeasurement extends infer M
  ? M extends unknown
    ? Omit<M, 'tool'> & { tool: string; serverTool: string }
    : never
  : never;

export interface RunPlan {
  server: AgentEntry;
  client: AgentEntry;
  /** A second agent on the server's node, for same-node measurements. */
  peer?: AgentEntry;
  measurements: PlannedMeasurement[];
  /** Default measurements these nodes cannot run (no peer agent, tool missing), with why. */
  skipped: { id: string; reason: string }[];
}

/** A built-in, or the tool's binary among those the agent reported (tools sharing a binary, like fortio's two modes, are reported once). */
function hasTool(a: AgentEntry, tool: string): boolean {
  const binary = binaryOf(tool);
  return binary === undefined || a.info.tools.some((t) => t.name === binary);
}

export function isPeer(a: AgentEntry): boolean {
  return a.info.labels[PEER_ROLE_LABEL] === 'peer';
}

function pick(
  agents: AgentEntry[],
  name: string | undefined,
  field: string,
  avoid?: AgentEntry,
  canLoad: (nodeName: string) => boolean = () => true,
): AgentEntry {
  if (name) {
    const a = agents.find((x) => x.id === name);
    if (!a)
      throw new CniBenchError(ErrorCodes.NO_AGENTS, `${field}: no connected agent on node '${name}'`, {
        details: { field, node: name },
      });
    return a;
  }
  // Unnamed: only schedulable workers carry load (a named node is the user's choice).
  const a = agents.find((x) => x !== avoid && canLoad(x.info.nodeName));
  if (!a) {
    const skipped = agents.filter((x) => x !== avoid && !canLoad(x.info.nodeName)).map((x) => x.info.nodeName);
    throw new CniBenchError(
      ErrorCodes.NO_AGENTS,
      `${field}: need a connected agent on a second schedulable worker node (have ${agents.length}${skipped.length ? `; not for load: ${skipped.join(', ')} (cordoned, NotReady, control plane or tainted; name one in ${field} to use it anyway)` : ''})`,
      { details: { field } },
    );
  }
  return a;
}

/** Native first: the first candidate that both ends have (lists end with a built-in where one exists). */
function firstShared(candidates: string[], client: AgentEntry, server: AgentEntry): string {
  // None on both ends: name the preferred one, so the refusal says what to install.
  const first = candidates.find((t) => hasTool(client, t) && hasTool(server, SERVER_TOOL_OF[t] ?? t)) ?? candidates[0];
  if (first === undefined)
    throw new CniBenchError(ErrorCodes.TOOL_MISSING, 'no tool in the catalogue can make this measurement');
  return first;
}

/** Whether a client can make the measurement as asked: rate, TCP_CRR, connections, through a Service. */
export function canMeasure(c: ClientFacts, m: ScenarioMeasurement): boolean {
  if (m.kind === 'http') return m.qps > 0 ? c.fixedRate : c.maxRate;
  if (m.path === 'service' && !c.throughService) return false;
  if (m.kind !== 'rr') return true;
  return (m.mode !== 'crr' || c.crr) && (c.maxConnections === undefined || m.connections <= c.maxConnections);
}

/**
 * The tools 'auto' tries for a measurement, in the catalogue's order: for
 * TCP_RR netperf (the study's tool) where it can run it (one connection, not
 * through a Service), then sockperf (one connection) and fortio's TCP mode
 * (TCP_RR only), then the built-in tcp-rr.
 */
export function autoCandidates(m: ScenarioMeasurement): string[] {
  return clientsOf(m.kind)
    .filter((t) => t.client.autoRank !== null && canMeasure(t.client, m))
    .map((t) => t.name);
}

/** Client tool a measurement uses on these agents. */
export function resolveClientTool(m: ScenarioMeasurement, client: AgentEntry, server: AgentEntry): string {
  if (m.tool !== 'auto') return m.tool;
  return firstShared(autoCandidates(m), client, server);
}

/** Server tool a client tool talks to; HTTP clients take the scenario's server (auto: a native server where installed, else the built-in). */
export function resolveServerTool(m: ScenarioMeasurement, clientTool: string, server: AgentEntry): string {
  if (m.kind !== 'http') return SERVER_TOOL_OF[clientTool] ?? clientTool;
  if (m.server !== 'auto') return m.server;
  const servers = serversOf('http');
  return (servers.find((t) => hasTool(server, t.name)) ?? servers.at(-1)!).name;
}

/** The agent that runs a measurement's client: the server node's peer for same-node paths, else the run's client. */
export function clientAgentFor(
  m: Pick<ScenarioMeasurement, 'path'>,
  plan: Pick<RunPlan, 'client' | 'peer'>,
): AgentEntry | undefined {
  return m.path === 'pod-to-pod-same-node' ? plan.peer : plan.client;
}

export function planRun(
  scenario: Scenario,
  available: AgentEntry[],
  hasServiceFrontend: boolean,
  canScale = false,
  canLoad: (nodeName: string) => boolean = () => true,
): RunPlan {
  if (scenario.serviceScale && !canScale) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      'serviceScale: this collector cannot create dummy Services (the lab can; a cluster collector needs Kubernetes access)',
      { details: { field: 'serviceScale' } },
    );
  }
  scenario.measurements.forEach((m, i) => {
    if (m.path === 'service' && !hasServiceFrontend) {
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        `measurements[${i}].path: 'service' needs a service frontend (the lab, or a collector with Kubernetes access), and this collector has none`,
        {
          details: { field: `measurements[${i}].path` },
        },
      );
    }
  });
  if (available.length === 0) throw new CniBenchError(ErrorCodes.NO_AGENTS, 'no agents are connected');
  const primaries = available.filter((a) => !isPeer(a));
  const server = pick(primaries, scenario.serverNode, 'serverNode', undefined, canLoad);
  const client =
    scenario.allowSameNode && !scenario.clientNode
      ? server
      : pick(primaries, scenario.clientNode, 'clientNode', server, canLoad);
  const peer = available.find((a) => isPeer(a) && a.info.nodeName === server.info.nodeName);
  const base = { server, client, ...(peer ? { peer } : {}) };
  const measurements: PlannedMeasurement[] = [];
  const skipped: RunPlan['skipped'] = [];
  scenario.measurements.forEach((m, i) => {
    try {
      measurements.push(planMeasurement(m, i, base));
    } catch (err) {
      // Defaults adapt to the nodes; what the user asked for explicitly is refused.
      if (!scenario.measurementsDefaulted) throw err;
      skipped.push({ id: m.id, reason: (err as Error).message });
    }
  });
  if (measurements.length === 0)
    throw new CniBenchError(
      ErrorCodes.TOOL_MISSING,
      `no measurement can run on these nodes: ${skipped.map((s) => s.reason).join('; ')}`,
    );
  return { ...base, measurements, skipped };
}

function planMeasurement(
  m: ScenarioMeasurement,
  i: number,
  base: Omit<RunPlan, 'measurements' | 'skipped'>,
): PlannedMeasurement {
  const { server } = base;
  const c = clientAgentFor(m, base);
  if (!c) {
    throw new CniBenchError(
      ErrorCodes.NO_AGENTS,
      `measurements[${i}].path: 'pod-to-pod-same-node' needs a peer agent (label ${PEER_ROLE_LABEL}=peer) on node '${server.info.nodeName}', and none is connected`,
      {
        details: { field: `measurements[${i}].path`, node: server.info.nodeName },
      },
    );
  }
  const tool = resolveClientTool(m, c, server);
  const serverTool = resolveServerTool(m, tool, server);
  if (m.path === 'service' && findTool(tool)?.client?.throughService === false) {
    const instead = orList(clientsOf(m.kind).filter((t) => t.client.throughService));
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `measurements[${i}].tool: '${tool}' opens a second (data) connection that a one-port Service does not front; use ${instead} on path 'service'`,
      {
        details: { field: `measurements[${i}].tool`, tool },
      },
    );
  }
  for (const [agent, t] of [
    [c, tool],
    [server, serverTool],
  ] as const) {
    if (!hasTool(agent, t)) {
      throw new CniBenchError(
        ErrorCodes.TOOL_MISSING,
        `measurements[${i}]: tool '${t}' is not installed on node '${agent.id}'`,
        {
          details: { field: `measurements[${i}].tool`, tool: t, node: agent.id },
        },
      );
    }
  }
  return { ...m, tool, serverTool } as PlannedMeasurement;
}
