/**
 * Chooses where a run's servers and clients go and checks, before anything
 * starts, that those agents have every tool the scenario needs. Pure: it works
 * on a snapshot of the registry, so a refusal can be returned to the API caller.
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { BUILTIN_TOOLS } from '../../core/tools.js';
import type { AgentEntry } from '../agents/registry.js';
import type { Scenario } from './scenario.js';

export interface RunPlan {
  server: AgentEntry;
  client: AgentEntry;
}

/** Server tool each client tool talks to. */
export function serverToolFor(m: Scenario['measurements'][number]): string {
  return m.kind === 'throughput' ? 'iperf3' : m.server;
}

function hasTool(a: AgentEntry, tool: string): boolean {
  return BUILTIN_TOOLS.has(tool) || a.info.tools.some((t) => t.name === tool);
}

function pick(agents: AgentEntry[], name: string | undefined, field: string, avoid?: AgentEntry): AgentEntry {
  if (name) {
    const a = agents.find((x) => x.id === name);
    if (!a) throw new CniBenchError(ErrorCodes.NO_AGENTS, `${field}: no connected agent on node '${name}'`, { details: { field, node: name } });
    return a;
  }
  const a = agents.find((x) => x !== avoid);
  if (!a) throw new CniBenchError(ErrorCodes.NO_AGENTS, `${field}: need a connected agent on a second node (have ${agents.length})`, { details: { field } });
  return a;
}

export function planRun(scenario: Scenario, available: AgentEntry[], hasServiceFrontend: boolean, canScale = false): RunPlan {
  if (scenario.serviceScale && !canScale) {
    throw new CniBenchError(ErrorCodes.VALIDATION, 'serviceScale: this collector cannot create dummy Services (the lab can; a cluster collector needs Kubernetes access)', { details: { field: 'serviceScale' } });
  }
  scenario.measurements.forEach((m, i) => {
    if (m.path === 'service' && !hasServiceFrontend) {
      throw new CniBenchError(ErrorCodes.VALIDATION, `measurements[${i}].path: 'service' needs a service frontend (the lab, or a collector with Kubernetes access), and this collector has none`, {
        details: { field: `measurements[${i}].path` },
      });
    }
  });
  if (available.length === 0) throw new CniBenchError(ErrorCodes.NO_AGENTS, 'no agents are connected');
  const server = pick(available, scenario.serverNode, 'serverNode');
  const client = scenario.allowSameNode && !scenario.clientNode ? server : pick(available, scenario.clientNode, 'clientNode', server);
  scenario.measurements.forEach((m, i) => {
    const need: [AgentEntry, string][] = [
      [client, m.tool],
      [server, serverToolFor(m)],
    ];
    for (const [agent, tool] of need) {
      if (!hasTool(agent, tool)) {
        throw new CniBenchError(ErrorCodes.TOOL_MISSING, `measurements[${i}]: tool '${tool}' is not installed on node '${agent.id}'`, {
          details: { field: `measurements[${i}].tool`, tool, node: agent.id },
        });
      }
    }
  });
  return { server, client };
}
