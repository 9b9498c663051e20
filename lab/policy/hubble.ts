/**
 * Hubble on against off in the Cilium lab, as a cluster does it: cilium-config's
 * enable-hubble set and every agent rolled (CiliumLab.restartAgents, one node
 * at a time, each ready with its endpoints back before the next). On counts
 * only once every agent reports Hubble Ok (GET /v1/debuginfo), its observer
 * answers on hubble.sock, and the server node's observer has seen flows from
 * the clients to the server (probe connections the lab makes, found by
 * GetFlows) with its seen-flows counter moving. Off counts once every agent
 * reports Hubble Disabled and none serves hubble.sock.
 */
import { type CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  type HubbleFlow,
  hubbleFlowsTo,
  hubbleServerStatus,
  hubbleSocket,
  readCiliumFeatures,
  verdictName,
} from '../../agent/index.js';
import type { ConditionEvidence } from '../../core/conditions.js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { CILIUM_CONFIGMAP, CILIUM_NAMESPACE } from '../cilium/config.js';
import { PROBE_PORT, probe, startListener } from './probe.js';
import type { ProbeEnd } from './verify.js';

export interface HubbleAgent {
  nodeName: string;
  socket: string;
}

export interface HubbleDeps {
  core: CoreV1Api;
  agents: () => readonly HubbleAgent[];
  /** Rolls every agent with cilium-config as the apiserver has it now. */
  restart: (signal?: AbortSignal) => Promise<void>;
}

export interface HubbleEnds {
  server: ProbeEnd & { ip: string; nodeName: string };
  clients: (ProbeEnd & { ip: string })[];
}

/** Connections each client opens to the server while Hubble is verified. */
const PROBES_PER_CLIENT = 5;
const FLOWS_ASKED = 200;

/** Pure: the flows from the clients to the server, and a sentence on what the observer saw. */
export function flowsFromClients(
  flows: readonly HubbleFlow[],
  serverIp: string,
  clientIps: readonly string[],
): { matched: HubbleFlow[]; from: string[] } {
  const matched = flows.filter((f) => f.destination === serverIp && clientIps.includes(f.source));
  return { matched, from: [...new Set(matched.map((f) => f.source))] };
}

async function setEnableHubble(core: CoreV1Api, on: boolean): Promise<void> {
  await core.patchNamespacedConfigMap(
    { name: CILIUM_CONFIGMAP, namespace: CILIUM_NAMESPACE, body: { data: { 'enable-hubble': String(on) } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function states(agents: readonly HubbleAgent[]): Promise<{ nodeName: string; state: string }[]> {
  return Promise.all(
    agents.map(async (a) => ({ nodeName: a.nodeName, state: (await readCiliumFeatures(a.socket)).hubble })),
  );
}

/** Turns Hubble on, rolls the agents and verifies that the observer sees the clients' flows to the server. */
export async function hubbleOn(d: HubbleDeps, ends: HubbleEnds, signal: AbortSignal): Promise<ConditionEvidence> {
  const began = Date.now();
  await setEnableHubble(d.core, true);
  await d.restart(signal);
  const restartMs = Date.now() - began;
  const agents = d.agents();
  const st = await states(agents);
  const notOk = st.filter((s) => s.state !== 'Ok');
  if (notOk.length)
    throw new CniBenchError(
      ErrorCodes.LAB,
      `Hubble not on after enable-hubble=true and a restart: ${notOk.map((s) => `${s.nodeName}: Hubble ${s.state}`).join(', ')}`,
    );
  const serverAgent = agents.find((a) => a.nodeName === ends.server.nodeName);
  if (!serverAgent) throw new CniBenchError(ErrorCodes.LAB, `no cilium-agent on ${ends.server.nodeName}`);
  const sock = hubbleSocket(serverAgent.socket);
  const before = await hubbleServerStatus(sock);
  const listener = await startListener(ends.server.ns, PROBE_PORT);
  let connected = 0;
  try {
    for (const c of ends.clients)
      for (let i = 0; i < PROBES_PER_CLIENT; i++)
        if ((await probe(c.ns, ends.server.ip, PROBE_PORT, 3000)) === 'connected') connected++;
  } finally {
    await listener.stop();
  }
  // The observer reads the agent's monitor events asynchronously: give it a moment, then ask.
  let seen = { matched: [] as HubbleFlow[], from: [] as string[] };
  let after = before;
  for (let i = 0; i < 20 && (seen.from.length < ends.clients.length || after.seenFlows <= before.seenFlows); i++) {
    await new Promise((r) => setTimeout(r, 250));
    after = await hubbleServerStatus(sock);
    seen = flowsFromClients(
      await hubbleFlowsTo(sock, ends.server.ip, FLOWS_ASKED),
      ends.server.ip,
      ends.clients.map((c) => c.ip),
    );
  }
  const ips = ends.clients.map((c) => c.ip);
  if (after.seenFlows <= before.seenFlows || seen.from.length < ips.length)
    throw new CniBenchError(
      ErrorCodes.LAB,
      `Hubble reports Ok but its observer on ${ends.server.nodeName} did not see the probe traffic: seen-flows ${before.seenFlows} -> ${after.seenFlows}, flows to ${ends.server.ip} from ${seen.from.join(', ') || 'no client'} of ${ips.join(', ')} (${connected} connections made)`,
    );
  const verdicts = [...new Set(seen.matched.map((f) => verdictName(f.verdict)))].join('/');
  return {
    how: `Hubble on in every agent (${st.map((s) => `${s.nodeName}: ${s.state}`).join(', ')}, cilium-config enable-hubble=true, agents rolled in ${restartMs} ms); the observer on ${ends.server.nodeName} (hubble.sock) counted ${after.seenFlows - before.seenFlows} new flows and GetFlows shows ${seen.matched.length} flows (${verdicts}) to ${ends.server.name} ${ends.server.ip} from ${seen.from.join(', ')}`,
    apiMs: restartMs,
    facts: {
      restartMs,
      seenFlowsBefore: before.seenFlows,
      seenFlowsAfter: after.seenFlows,
      flowsToServer: seen.matched.length,
      probesConnected: connected,
      maxFlows: after.maxFlows,
    },
  };
}

/** What the server node's observer saw while the condition was measured (read just before it is turned off). */
async function seenWhileOn(d: HubbleDeps, ends: HubbleEnds): Promise<Record<string, number>> {
  const a = d.agents().find((x) => x.nodeName === ends.server.nodeName);
  if (!a) return {};
  try {
    const s = await hubbleServerStatus(hubbleSocket(a.socket));
    const flows = await hubbleFlowsTo(hubbleSocket(a.socket), ends.server.ip, FLOWS_ASKED);
    return { seenFlowsAtRevert: s.seenFlows, lastFlowsToServer: flows.length };
  } catch {
    return {};
  }
}

/** Turns Hubble off, rolls the agents and verifies that none reports it or serves hubble.sock. */
export async function hubbleOff(
  d: HubbleDeps,
  ends: HubbleEnds | undefined,
  seenAtApply: number | undefined,
): Promise<ConditionEvidence> {
  const whileOn = ends ? await seenWhileOn(d, ends) : {};
  const began = Date.now();
  await setEnableHubble(d.core, false);
  await d.restart();
  const restartMs = Date.now() - began;
  const agents = d.agents();
  const st = await states(agents);
  const on = st.filter((s) => s.state !== 'Disabled');
  const serving: string[] = [];
  for (const a of agents) {
    const answered = await hubbleServerStatus(hubbleSocket(a.socket), 3000).then(
      () => true,
      () => false,
    );
    if (answered) serving.push(a.nodeName);
  }
  if (on.length || serving.length)
    throw new CniBenchError(
      ErrorCodes.LAB,
      `Hubble still on after enable-hubble=false and a restart: ${[...on.map((s) => `${s.nodeName}: Hubble ${s.state}`), ...serving.map((n) => `${n} serves hubble.sock`)].join(', ')}`,
    );
  const at = whileOn.seenFlowsAtRevert;
  const counted =
    at !== undefined && seenAtApply !== undefined
      ? `; while on, the server node's observer counted ${at - seenAtApply} flows after its verification (the measured traffic)`
      : '';
  return {
    how: `Hubble off again: every agent reports Hubble Disabled (${st.map((s) => s.nodeName).join(', ')}) and none serves hubble.sock, agents rolled in ${restartMs} ms${counted}`,
    apiMs: restartMs,
    facts: { restartMs, ...whileOn },
  };
}
