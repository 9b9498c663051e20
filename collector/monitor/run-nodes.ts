/**
 * The nodes a run uses, read from outside the orchestrator: the run's stored
 * cluster description names its server, client and peer agents, and the
 * registry maps agents to nodes. Pure. A run whose description is not there
 * yet uses every node (better to pause all probes than to disturb it).
 */
export interface RunCluster {
  server?: { node?: unknown };
  client?: { node?: unknown };
  peer?: { node?: unknown };
}

export function nodesOfRun(
  cluster: unknown,
  nodeOfAgent: (agentId: string) => string | undefined,
  allNodes: readonly string[],
): Set<string> {
  const c = (cluster ?? {}) as RunCluster;
  const ids = [c.server?.node, c.client?.node, c.peer?.node].filter(
    (x): x is string => typeof x === 'string' && x !== '',
  );
  if (ids.length === 0) return new Set(allNodes);
  return new Set(ids.map((id) => nodeOfAgent(id) ?? id));
}
