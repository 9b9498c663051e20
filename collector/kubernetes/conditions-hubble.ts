/**
 * Hubble on against off in a cluster, with the operator's opt-in
 * (rbac.ciliumConfig.write): cilium-config's enable-hubble set to "true" and
 * daemonset/cilium rolled (what `kubectl rollout restart` and `rollout status`
 * do), then counted on only when every connected agent reads its node's Hubble
 * as Ok and the server node's observer counts new flows and returns flows from
 * every client to the server after probe connections the agents make (the
 * agents' Hubble reader: agent/observe/hubble-reader.ts). The revert puts
 * enable-hubble back to what it was (or removes it), rolls Cilium again and
 * counts off only when every agent reads Disabled and no observer answers.
 * The value before is kept in an annotation on cilium-config too, so a
 * collector that died mid-condition can put it back when it starts again.
 * The checks are pure and unit-tested.
 */
import type { ConditionEvidence, ConditionProbes, ConditionTarget, NodeHubble } from '../../core/conditions.js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { hubbleRefusal } from './conditions-cilium.js';

export const ENABLE_HUBBLE = 'enable-hubble';
/** On cilium-config while the collector holds Hubble on: enable-hubble's value before ('' when it was unset). */
export const HUBBLE_BEFORE_ANNOTATION = 'cni-bench.io/enable-hubble-before';

/** Flows GetFlows is asked for (the last ones to the server). */
const FLOWS_ASKED = 200;
/** After a rollout, agents may take a rescan (30 s) to find the new cilium-agent: the state is polled this long. */
const STATE_DEADLINE_MS = 180_000;
const POLL_MS = 2_000;
const FLOW_TRIES = 10;

/** What the condition needs of the cluster: cilium-config and the rollout (CiliumConfig gives them). */
export interface HubbleCluster {
  read(): Promise<Record<string, string> | undefined>;
  readAnnotation(): Promise<string | undefined>;
  /** Sets enable-hubble (null removes it) and the before-annotation (null removes it) in one patch. */
  setHubble(value: string | null, before: string | null): Promise<void>;
  /** Rolls daemonset/cilium and waits for every pod updated and available. */
  restart(signal?: AbortSignal): Promise<void>;
}

/** Pure: the agents whose node does not read `want` (Ok: state Ok and the observer answering; Disabled: state Disabled and no observer). */
export function hubbleStateProblems(nodes: readonly NodeHubble[], want: 'Ok' | 'Disabled'): string[] {
  if (!nodes.length) return ['no agent is connected to read Hubble from'];
  const out: string[] = [];
  for (const n of nodes) {
    const r = n.reading;
    if (!r) out.push(`${n.agent}: no Hubble reading (agent did not answer)`);
    else if (r.state !== want)
      out.push(`${n.agent}: Hubble ${r.state || 'not read'}${r.errors.length ? ` (${r.errors.join('; ')})` : ''}`);
    else if (want === 'Ok' && !r.observerAnswered) out.push(`${n.agent}: Hubble Ok but ${r.errors.join('; ')}`);
    else if (want === 'Disabled' && r.observerAnswered) out.push(`${n.agent}: Hubble Disabled but ${r.socket} answers`);
  }
  return out;
}

/** Pure: did the server node's observer count new flows, and return flows to the server from every client? */
export function flowsSeen(
  before: NodeHubble | undefined,
  after: NodeHubble | undefined,
  serverIp: string,
  clientIps: readonly string[],
): { ok: boolean; newFlows: number; matched: number; from: string[]; missing: string[] } {
  const a = after?.reading;
  const newFlows = a && before?.reading ? a.seenFlows - before.reading.seenFlows : 0;
  const matched = (a?.flows ?? []).filter((f) => f.destination === serverIp && clientIps.includes(f.source));
  const from = [...new Set(matched.map((f) => f.source))];
  const missing = clientIps.filter((ip) => !from.includes(ip));
  return {
    ok: newFlows > 0 && missing.length === 0 && clientIps.length > 0,
    newFlows,
    matched: matched.length,
    from,
    missing,
  };
}

const server = (nodes: readonly NodeHubble[]): NodeHubble | undefined => nodes.find((n) => n.server);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ClusterHubble {
  /** enable-hubble before apply (null: unset); undefined while the collector has changed nothing. */
  private before: string | null | undefined;

  constructor(
    private readonly cluster: HubbleCluster,
    private readonly ciliumNamespace: string,
    private readonly log: Logger,
  ) {}

  async apply(target: ConditionTarget, signal: AbortSignal): Promise<ConditionEvidence> {
    const probes = this.probesOf(target);
    const config = await this.cluster.read();
    if (!config) throw refused(hubbleRefusal(undefined, this.ciliumNamespace, true));
    const was = config[ENABLE_HUBBLE];
    if (was === 'true')
      throw refused(
        `cilium-config in ${this.ciliumNamespace} already has enable-hubble=true: the baseline was measured with Hubble on, so there is no off to compare with; set it to false and roll Cilium to measure Hubble on against off`,
      );
    const began = Date.now();
    this.before = was ?? null;
    await this.cluster.setHubble('true', was ?? '');
    await this.cluster.restart(signal);
    const rolledMs = Date.now() - began;
    const ok = await this.waitFor(probes, target.serverPodIp, 'Ok', signal);
    const sv = server(ok.nodes);
    if (!sv?.reading) throw new CniBenchError(ErrorCodes.INTERNAL, 'the server agent gave no Hubble reading');
    const listener = await probes.listen(CLUSTER_HUBBLE_PORT, signal);
    let connected = 0;
    let seen = flowsSeen(sv, sv, target.serverPodIp, target.clientPodIps);
    const from = new Set<string>();
    let matched = 0;
    try {
      // One client at a time, the observer read right after its burst: a burst fills GetFlows' last flows to the
      // server, so a later client's would push an earlier one's out.
      for (const c of probes.allowed) {
        if ((await probes.probe(c, target.serverPodIp, CLUSTER_HUBBLE_PORT, 500)) === 'connected') connected++;
        const had = from.size;
        for (let i = 0; i < FLOW_TRIES && from.size === had; i++) {
          await sleep(500);
          seen = flowsSeen(
            sv,
            server((await probes.hubble?.(target.serverPodIp, FLOWS_ASKED)) ?? []),
            target.serverPodIp,
            target.clientPodIps,
          );
          for (const ip of seen.from) from.add(ip);
          if (from.size > had) matched += seen.matched;
        }
      }
    } finally {
      await listener.stop();
    }
    const missing = target.clientPodIps.filter((ip) => !from.has(ip));
    seen = { ...seen, ok: seen.newFlows > 0 && missing.length === 0, matched, from: [...from], missing };
    if (!seen.ok)
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        `Hubble reports Ok on every node but the observer on ${sv.agent} did not see the probe traffic: ${seen.newFlows} new flows, flows to ${target.serverPodIp} from ${seen.from.join(', ') || 'no client'}, none from ${seen.missing.join(', ')} (${connected} probes connected)`,
      );
    return {
      how: `Hubble on in every agent's node (${ok.nodes.map((n) => `${n.agent}: ${n.reading?.state}`).join(', ')}; cilium-config enable-hubble=true, daemonset/cilium rolled in ${rolledMs} ms, Ok ${ok.ms} ms later); the observer on ${sv.agent} counted ${seen.newFlows} new flows and GetFlows, read after each client's burst, returned ${seen.matched} flows to ${target.serverPodIp} from ${seen.from.join(', ')}`,
      apiMs: rolledMs,
      facts: {
        rolloutMs: rolledMs,
        okAfterRolloutMs: ok.ms,
        seenFlowsBefore: sv.reading.seenFlows,
        newFlows: seen.newFlows,
        flowsToServer: seen.matched,
        probesConnected: connected,
        enableHubbleBefore: was ?? '(unset)',
      },
    };
  }

  async revert(target: ConditionTarget): Promise<ConditionEvidence> {
    if (this.before === undefined) return { how: 'nothing was applied (cilium-config unchanged)', facts: {} };
    const probes = this.probesOf(target);
    const whileOn = server((await probes.hubble?.(target.serverPodIp, 1).catch(() => [])) ?? [])?.reading;
    const began = Date.now();
    await this.cluster.setHubble(this.before, null);
    const value = this.before ?? '(removed)';
    this.before = undefined;
    await this.cluster.restart();
    const rolledMs = Date.now() - began;
    const off = await this.waitFor(probes, target.serverPodIp, 'Disabled');
    return {
      how: `Hubble off again: cilium-config enable-hubble back to ${value}, daemonset/cilium rolled in ${rolledMs} ms; every agent's node reads Hubble Disabled (${off.nodes.map((n) => n.agent).join(', ')}) and no observer answers${whileOn?.observerAnswered ? `; the server node's observer had seen ${whileOn.seenFlows} flows while on` : ''}`,
      apiMs: rolledMs,
      facts: {
        rolloutMs: rolledMs,
        disabledAfterRolloutMs: off.ms,
        enableHubble: value,
        ...(whileOn?.observerAnswered ? { seenFlowsAtRevert: whileOn.seenFlows } : {}),
      },
    };
  }

  /**
   * At start-up: a collector that died with Hubble on left the value before in
   * cilium-config's annotation; put it back and roll Cilium. Returns whether it did.
   */
  async recover(): Promise<boolean> {
    const was = await this.cluster.readAnnotation();
    if (was === undefined) return false;
    this.log.warn('an earlier collector left Hubble on: restoring cilium-config enable-hubble', {
      value: was || '(unset)',
    });
    await this.cluster.setHubble(was === '' ? null : was, null);
    await this.cluster.restart();
    return true;
  }

  /** Polls every agent's reading until all read `want`; throws with the agents that do not after the deadline. */
  private async waitFor(
    probes: ConditionProbes,
    serverIp: string,
    want: 'Ok' | 'Disabled',
    signal?: AbortSignal,
  ): Promise<{ nodes: NodeHubble[]; ms: number }> {
    const began = Date.now();
    for (;;) {
      const nodes = (await probes.hubble?.(serverIp, 1)) ?? [];
      const problems = hubbleStateProblems(nodes, want);
      if (!problems.length) return { nodes, ms: Date.now() - began };
      if (Date.now() - began > STATE_DEADLINE_MS || signal?.aborted)
        throw new CniBenchError(
          signal?.aborted ? ErrorCodes.CANCELLED : ErrorCodes.VALIDATION,
          `Hubble not ${want === 'Ok' ? 'on' : 'off'} ${Math.round((Date.now() - began) / 1000)} s after the rollout: ${problems.join(', ')}`,
        );
      await sleep(POLL_MS);
    }
  }

  private probesOf(target: ConditionTarget): ConditionProbes {
    if (!target.probes?.hubble)
      throw new CniBenchError(
        ErrorCodes.INTERNAL,
        'a cluster Hubble condition needs Hubble readings through the agents',
      );
    if (!target.probes.allowed.length)
      throw new CniBenchError(ErrorCodes.VALIDATION, 'the run has no client agent to make traffic Hubble must see');
    return target.probes;
  }
}

/** Where the server agent's listener binds while Hubble is verified (the policy conditions' port). */
const CLUSTER_HUBBLE_PORT = 39_099;

function refused(why: string): CniBenchError {
  return new CniBenchError(ErrorCodes.VALIDATION, why, { details: { field: 'conditions.hubble' } });
}
