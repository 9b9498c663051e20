/**
 * The lab's ConditionDriver (core/conditions.ts): NetworkPolicy conditions
 * made through the lab's apiserver and enforced by the lab's real enforcer
 * (Cilium's agents, or kube-router's policy controller on an iptables or
 * nftables lab; enforcer.ts), verified by probes from a denied pod (a lab pod
 * that is neither the server nor a client) and an allowed one (the client).
 * Conditions this machine cannot run (L7 without Envoy, encryption without
 * WireGuard or the AEAD ciphers) fail with the detected reason.
 */
import {
  type CoreV1Api,
  type KubeConfig,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { ConditionDriver, ConditionEvidence, ConditionRequest, ConditionTarget } from '../../core/conditions.js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { applyPolicies, enforcedEvidence } from '../../core/policy-apply.js';
import { labPodName } from '../cilium/dataplane.js';
import { LAB_POD_NAMESPACE } from '../cilium/objects.js';
import type { LabPlan } from '../plan.js';
import { type CiliumFeatures, readCiliumFeatures } from './cilium-status.js';
import { type HubbleEnds, hubbleOff, hubbleOn } from './hubble.js';
import { ROLE_LABEL, RUN_LABEL, runPolicies } from './objects.js';
import { PROBE_PORT, startListener } from './probe.js';
import { type Quiet, waitQuiet } from './settle.js';
import { envoySupport, ipsecSupport, wireguardSupport } from './support.js';
import { type ProbeEnd, waitForPolicy } from './verify.js';

export interface LabConditionsOptions {
  kc: KubeConfig;
  core: CoreV1Api;
  plan: LabPlan;
  /** Who enforces NetworkPolicy here, for reports: "Cilium" or "kube-router". */
  enforcer: string;
  cilium: boolean;
  /** The Cilium build's folder (its Envoy would sit beside the agent). */
  ciliumDir?: string;
  /** Each Cilium agent's node name and API socket (Hubble and encryption state come from the agents). */
  ciliumAgents?: () => readonly { nodeName: string; socket: string }[];
  /** Rolls the Cilium agents with cilium-config as the apiserver has it (CiliumLab.restartAgents): how Hubble is turned on and off. */
  restartCilium?: (signal?: AbortSignal) => Promise<void>;
  /** The enforcer's processes (cilium-agents or kube-routers): a change counts as settled once they are quiet (settle.ts). */
  enforcerPids?: () => readonly number[];
  log: Logger;
}

/** How long enforcement may take per step before the condition fails: 60 s plus 50 ms per policy. */
function deadlineFor(policies: number): number {
  return 60_000 + 50 * policies;
}

interface Ends {
  server: ProbeEnd & { ip: string };
  clients: (ProbeEnd & { ip: string })[];
  denied: ProbeEnd;
}

export class LabConditions implements ConditionDriver {
  private readonly net: NetworkingV1Api;
  /** The server node's Hubble seen-flows when the condition was verified (what the measurements add is read at revert). */
  private hubbleSeenAtApply: number | undefined;

  constructor(private readonly o: LabConditionsOptions) {
    this.net = o.kc.makeApiClient(NetworkingV1Api);
  }

  get description(): string {
    return `lab NetworkPolicy enforced by ${this.o.enforcer}`;
  }

  async apply(req: ConditionRequest, target: ConditionTarget, signal: AbortSignal): Promise<ConditionEvidence> {
    if (req.kind === 'networkPolicy' || req.kind === 'policyCount')
      return this.policies(req.policies ?? (req.kind === 'networkPolicy' ? 1 : 0), target, signal);
    if (req.kind === 'hubble' && this.hubbleDeps) {
      const on = await hubbleOn(this.hubbleDeps, this.hubbleEnds(target), signal);
      this.hubbleSeenAtApply = on.facts.seenFlowsAfter as number;
      return this.settled(on, signal);
    }
    throw new CniBenchError(ErrorCodes.LAB, await this.unsupported(req));
  }

  async revert(req: ConditionRequest, target: ConditionTarget): Promise<ConditionEvidence> {
    if (req.kind === 'hubble' && this.hubbleDeps) {
      let ends: HubbleEnds | undefined;
      try {
        ends = this.hubbleEnds(target);
      } catch {
        // still turn it off
      }
      const seen = this.hubbleSeenAtApply;
      this.hubbleSeenAtApply = undefined;
      return this.settled(await hubbleOff(this.hubbleDeps, ends, seen));
    }
    if (req.kind !== 'networkPolicy' && req.kind !== 'policyCount') return { how: 'nothing was applied', facts: {} };
    const ends = this.ends(target);
    const began = Date.now();
    const deleted = await this.deleteRunPolicies(target.runId);
    await this.label(ends, false);
    const apiMs = Date.now() - began;
    const listener = await startListener(ends.server.ns, PROBE_PORT);
    try {
      const open = await waitForPolicy(
        'open',
        { denied: ends.denied, allowed: ends.clients, serverIp: ends.server.ip, port: PROBE_PORT },
        began,
        deadlineFor(deleted),
      );
      return await this.settled({
        how: `${deleted} policies deleted; the denied client ${ends.denied.name} connects to ${ends.server.name} again`,
        enforcementMs: open.ms,
        apiMs,
        facts: { deleted, polls: open.polls },
      });
    } finally {
      await listener.stop();
    }
  }

  /**
   * Waits for the enforcer to finish reacting to the change (settle.ts) before
   * anything is measured under it; the evidence says how long that took.
   */
  private async settled(e: ConditionEvidence, signal?: AbortSignal): Promise<ConditionEvidence> {
    if (!this.o.enforcerPids) return e;
    const q: Quiet = await waitQuiet(this.o.enforcerPids, signal ? { signal } : {});
    const said = q.quiet
      ? `; ${this.o.enforcer} quiet ${q.ms} ms later (${Math.round(q.millicores)} m)`
      : `; ${this.o.enforcer} still busy after ${q.ms} ms (${Math.round(q.millicores)} m): measured beside it`;
    return {
      ...e,
      how: `${e.how}${said}`,
      facts: { ...e.facts, settleMs: q.ms, enforcerMillicores: Math.round(q.millicores), settled: q.quiet },
    };
  }

  /** What Hubble on/off needs: the Cilium lab's agents and their restart. */
  private get hubbleDeps() {
    const { ciliumAgents, restartCilium } = this.o;
    if (!this.o.cilium || !ciliumAgents || !restartCilium) return undefined;
    return { core: this.o.core, agents: ciliumAgents, restart: restartCilium };
  }

  private hubbleEnds(target: ConditionTarget): HubbleEnds {
    const e = this.ends(target, false);
    const node = this.o.plan.nodes.find((n) => n.pods.some((p) => p.ip === e.server.ip));
    return {
      server: { ...e.server, nodeName: node?.name ?? '' },
      clients: e.clients,
    };
  }

  private async unsupported(req: ConditionRequest): Promise<string> {
    if (req.kind === 'l7Policy') {
      if (!this.o.cilium) return `L7 policy is a Cilium feature; this lab's dataplane (${this.o.enforcer}) has none`;
      return (await envoySupport(this.o.ciliumDir)).reason;
    }
    if (req.kind === 'encryption') {
      if (!this.o.cilium) return 'transparent encryption is a Cilium feature here; this lab runs kube-proxy';
      const [wg, ipsec] = await Promise.all([wireguardSupport(), ipsecSupport()]);
      const agents = await this.agentStates((f) => `encryption ${f.encryption}`);
      if (wg.ok || ipsec.ok)
        return `encryption is possible here (${wg.ok ? wg.reason : ipsec.reason}) but the lab does not turn it on yet (${agents})`;
      return `${wg.reason}; ${ipsec.reason} (${agents})`;
    }
    if (req.kind === 'hubble') {
      if (!this.o.cilium) return 'Hubble is part of Cilium; this lab runs kube-proxy';
      const agents = await this.agentStates((f) => `Hubble ${f.hubble}`);
      return `the agents report ${agents}, and this lab cannot restart them with enable-hubble (no restart given), so no flow counter can be shown moving`;
    }
    return `unknown condition ${req.kind}`;
  }

  /** Each agent's answer, e.g. "lab-n0: Hubble Disabled, lab-n1: Hubble Disabled" (GET /v1/debuginfo). */
  private async agentStates(what: (f: CiliumFeatures) => string): Promise<string> {
    const agents = this.o.ciliumAgents?.() ?? [];
    const parts = await Promise.all(
      agents.map(async (a) => {
        try {
          return `${a.nodeName}: ${what(await readCiliumFeatures(a.socket))}`;
        } catch (err) {
          return `${a.nodeName}: unreadable (${(err as Error).message.slice(0, 120)})`;
        }
      }),
    );
    return `${parts.join(', ') || 'no agent to ask'} (cilium-agent GET /v1/debuginfo)`;
  }

  /** Replaces the run's policies with `n` fresh ones and verifies enforcement; n = 0 verifies that nothing is enforced. */
  private async policies(n: number, target: ConditionTarget, signal: AbortSignal): Promise<ConditionEvidence> {
    const ends = this.ends(target);
    const listener = await startListener(ends.server.ns, PROBE_PORT);
    try {
      const probeEnds = {
        denied: ends.denied,
        allowed: ends.clients,
        serverIp: ends.server.ip,
        port: PROBE_PORT,
      };
      // From a clean slate: the previous step's policies gone and the server open to all (probes can reach it).
      const cleared = Date.now();
      const old = await this.deleteRunPolicies(target.runId);
      await this.label(ends, true);
      const open = await waitForPolicy('open', probeEnds, cleared, deadlineFor(old), signal);
      if (n === 0)
        return await this.settled(
          {
            how: `no policy selects ${ends.server.name}: the other client ${ends.denied.name} connects, as it must`,
            facts: { policies: 0, deletedBefore: old, openMs: open.ms },
          },
          signal,
        );
      const applied = await applyPolicies(
        runPolicies(LAB_POD_NAMESPACE, target.runId, n),
        (body) => this.net.createNamespacedNetworkPolicy({ namespace: LAB_POD_NAMESPACE, body }),
        (since) => waitForPolicy('enforced', probeEnds, since, deadlineFor(n), signal),
        signal,
      );
      return await this.settled(
        {
          how: `${n} NetworkPolicies select ${ends.server.name}: ${ends.denied.name} is blocked (${applied.on.denied}), the clients ${ends.clients.map((c) => c.name).join(', ')} connect; enforced by ${this.o.enforcer}, ${applied.afterLastCreateMs} ms after the last object was created`,
          ...enforcedEvidence(n, applied, ends.denied.name, ends.clients.map((c) => c.name).join(',')),
        },
        signal,
      );
    } finally {
      await listener.stop();
    }
  }

  /** Deletes the run's policies (by its label); returns how many there were. */
  private async deleteRunPolicies(runId: string): Promise<number> {
    const labelSelector = `${RUN_LABEL}=${runId}`;
    const list = await this.net.listNamespacedNetworkPolicy({ namespace: LAB_POD_NAMESPACE, labelSelector });
    if (list.items.length)
      await this.net.deleteCollectionNamespacedNetworkPolicy({ namespace: LAB_POD_NAMESPACE, labelSelector });
    return list.items.length;
  }

  /** Puts the role labels on the server and client pods (or takes them off). */
  private async label(ends: Ends, on: boolean): Promise<void> {
    const patch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const set = (name: string, role: string) =>
      this.o.core.patchNamespacedPod(
        { name, namespace: LAB_POD_NAMESPACE, body: { metadata: { labels: { [ROLE_LABEL]: on ? role : null } } } },
        patch,
      );
    await set(ends.server.name, 'server');
    for (const c of ends.clients) await set(c.name, 'client');
  }

  /** The lab pods behind the target's addresses, and a denied client: a pod that is neither. */
  private ends(target: ConditionTarget): Ends;
  private ends(target: ConditionTarget, needDenied: false): Omit<Ends, 'denied'>;
  private ends(target: ConditionTarget, needDenied = true): Ends | Omit<Ends, 'denied'> {
    const all = this.o.plan.nodes.flatMap((n) =>
      n.pods.map((p, j) => ({ ns: p.ns, ip: p.ip, name: labPodName(n.index, j) })),
    );
    const server = all.find((p) => p.ip === target.serverPodIp);
    if (!server) throw new CniBenchError(ErrorCodes.LAB, `no lab pod has the server's address ${target.serverPodIp}`);
    const clients = target.clientPodIps
      .map((ip) => all.find((p) => p.ip === ip && p !== server))
      .filter((p): p is (typeof all)[number] => p !== undefined);
    if (!clients.length) throw new CniBenchError(ErrorCodes.LAB, 'no lab pod has a client address');
    const denied = all.find((p) => p !== server && !clients.includes(p));
    if (!needDenied) return { server, clients };
    if (!denied)
      throw new CniBenchError(
        ErrorCodes.LAB,
        'no lab pod is free to act as the denied client (every pod is the server or a client): a policy cannot be verified',
      );
    return { server, clients, denied };
  }
}
