/**
 * A Hubble reading of this node, when the collector asks for one (SampleOnce
 * with a HubbleQuery): what the node's cilium-agent says of Hubble (GET
 * /v1/debuginfo on its API socket, reached through /proc/<pid>/root as the
 * agent's other Cilium reads are) and what the observer beside it answers on
 * hubble.sock (ServerStatus's live seen-flows counter; GetFlows for the last
 * flows to one address). The job runner imports this module only when asked,
 * so the gRPC observer client and its decoders never load in monitoring mode.
 * Nothing read is guessed: what failed is a line in `errors`, and an observer
 * that does not answer is `observerAnswered: false` (expected while Hubble is
 * off).
 */
import { asCniBenchError } from '../../core/errors.js';
import type { CiliumAgentStatus, HubbleQuery, HubbleReading } from '../../gen/cnibench/v1/agent.js';
import { readCiliumFeatures } from './cilium-features.js';
import { hubbleFlowsTo, hubbleServerStatus, hubbleSocket } from './hubble-observer.js';

/** GetFlows asks for at most this many flows, whatever the query says (a reading is small). */
export const MAX_FLOWS = 500;
const STATUS_TIMEOUT_MS = 5_000;
const FLOWS_TIMEOUT_MS = 10_000;

/** Pure: the flows to ask GetFlows for (0: none), bounded. */
export function flowsAsked(q: HubbleQuery): number {
  return q.flowsTo ? Math.min(Math.max(q.flows || 100, 1), MAX_FLOWS) : 0;
}

/** Reads Hubble's state and observer on the node whose cilium-agent is `agent` (undefined: no cilium-agent found). */
export async function readHubble(
  nodeName: string,
  agent: CiliumAgentStatus | undefined,
  q: HubbleQuery,
  notFound: readonly string[],
): Promise<HubbleReading> {
  const reading: HubbleReading = {
    nodeName,
    state: '',
    observerAnswered: false,
    seenFlows: 0,
    numFlows: 0,
    maxFlows: 0,
    flows: [],
    errors: [],
    socket: '',
  };
  if (!agent?.socket) {
    reading.errors.push(`no cilium-agent API on this node${notFound.length ? `: ${notFound.join('; ')}` : ''}`);
    return reading;
  }
  reading.socket = hubbleSocket(agent.socket);
  try {
    reading.state = (await readCiliumFeatures(agent.socket)).hubble;
  } catch (err) {
    reading.errors.push(`Hubble state: ${asCniBenchError(err).message}`);
  }
  try {
    const s = await hubbleServerStatus(reading.socket, STATUS_TIMEOUT_MS);
    Object.assign(reading, {
      observerAnswered: true,
      seenFlows: s.seenFlows,
      numFlows: s.numFlows,
      maxFlows: s.maxFlows,
    });
  } catch (err) {
    reading.errors.push(`observer ServerStatus: ${asCniBenchError(err).message}`);
    return reading;
  }
  const n = flowsAsked(q);
  if (n > 0)
    try {
      const flows = await hubbleFlowsTo(reading.socket, q.flowsTo, n, FLOWS_TIMEOUT_MS);
      reading.flows = flows.map((f) => ({ source: f.source, destination: f.destination, verdict: f.verdict }));
    } catch (err) {
      reading.errors.push(`observer GetFlows: ${asCniBenchError(err).message}`);
    }
  return reading;
}
