/**
 * A connected agent as the collector's registry holds it, for unit tests of
 * planning and placement: what it registered with (`info`), nothing sent yet.
 */
import type { AgentEntry } from '../../../collector/agents/registry.js';
import { RegisterRequest, ToolInfo } from '../../../gen/cnibench/v1/agent.js';

/** `info` holds what differs from a bare registration; the node and agent name default to `id`. */
export function agentEntry(
  id: string,
  info: Partial<Omit<RegisterRequest, 'tools'>> & { tools?: Partial<ToolInfo>[] },
): AgentEntry {
  return {
    id,
    info: RegisterRequest.fromPartial({
      nodeName: id,
      agentName: id,
      ...info,
      tools: (info.tools ?? []).map((t) => ToolInfo.fromPartial(t)),
    }),
    lastSeq: 0,
    ackedSeq: 0,
    lastSeenMs: 0,
    connected: true,
    lost: false,
    outboxDropped: 0,
    send: undefined,
  };
}
