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
  type V1NetworkPolicy,
} from '@kubernetes/client-node';
import type { ConditionDriver, ConditionEvidence, ConditionRequest, ConditionTarget } from '../../core/conditions.js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { labPodName } from '../cilium/dataplane.js';
import { LAB_POD_NAMESPACE } from '../cilium/objects.js';
import type { LabPlan } from '../plan.js';
import { ROLE_LABEL, RUN_LABEL, runPolicies } from './objects.js';
import { PROBE_PORT, startListener } from './probe.js';
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
  log: Logger;
}

/** How long enforcement may take per step before the condition fails: 60 s plus 50 ms per policy. */
function deadlineFor(policies: number): number {
  return 60_000 + 50 * policies;
}

interface Ends {
  server: ProbeEnd & { ip: string };
  clients: ProbeEnd[];
  denied: ProbeEnd;
}

export class LabConditions implements ConditionDriver {
  private readonly net: NetworkingV1Api;

  constructor(private readonly o: LabConditionsOptions) {
    this.net = o.kc.makeApiClient(NetworkingV1Api);
  }

  get description(): string {
    return `lab NetworkPolicy enforced by ${this.o.enforcer}`;
  }

  async apply(req: ConditionRequest, target: ConditionTarget, signal: AbortSignal): Promise<ConditionEvidence> {
    if (req.kind === 'networkPolicy' || req.kind === 'policyCount')
      return this.policies(req.policies ?? (req.kind === 'networkPolicy' ? 1 : 0), target, signal);
    throw new CniBenchError(ErrorCodes.LAB, await this.unsupported(req));
  }

  async revert(req: ConditionRequest, target: ConditionTarget): Promise<ConditionEvidence> {
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
        { denied: ends.denied, allowed: ends.clients[0] as ProbeEnd, serverIp: ends.server.ip, port: PROBE_PORT },
        began,
        deadlineFor(deleted),
      );
      return {
        how: `${deleted} policies deleted; the denied client ${ends.denied.name} connects to ${ends.server.name} again`,
        enforcementMs: open.ms,
        apiMs,
        facts: { deleted, polls: open.polls },
      };
    } finally {
      await listener.stop();
    }
  }

  private async unsupported(req: ConditionRequest): Promise<string> {
    if (req.kind === 'l7Policy') {
      if (!this.o.cilium) return `L7 policy is a Cilium feature; this lab's dataplane (${this.o.enforcer}) has none`;
      return (await envoySupport(this.o.ciliumDir)).reason;
    }
    if (req.kind === 'encryption') {
      if (!this.o.cilium) return 'transparent encryption is a Cilium feature here; this lab runs kube-proxy';
      const [wg, ipsec] = await Promise.all([wireguardSupport(), ipsecSupport()]);
      if (wg.ok || ipsec.ok)
        return `encryption is possible here (${wg.ok ? wg.reason : ipsec.reason}) but the lab does not turn it on yet`;
      return `${wg.reason}; ${ipsec.reason}`;
    }
    if (req.kind === 'hubble') {
      if (!this.o.cilium) return 'Hubble is part of Cilium; this lab runs kube-proxy';
      return 'Hubble on/off needs the Cilium agents restarted with --enable-hubble, which the lab does not do yet';
    }
    return `unknown condition ${req.kind}`;
  }

  /** Replaces the run's policies with `n` fresh ones and verifies enforcement; n = 0 verifies that nothing is enforced. */
  private async policies(n: number, target: ConditionTarget, signal: AbortSignal): Promise<ConditionEvidence> {
    const ends = this.ends(target);
    const listener = await startListener(ends.server.ns, PROBE_PORT);
    try {
      const probeEnds = {
        denied: ends.denied,
        allowed: ends.clients[0] as ProbeEnd,
        serverIp: ends.server.ip,
        port: PROBE_PORT,
      };
      // From a clean slate: the previous step's policies gone and the server open to all (probes can reach it).
      const cleared = Date.now();
      const old = await this.deleteRunPolicies(target.runId);
      await this.label(ends, true);
      const open = await waitForPolicy('open', probeEnds, cleared, deadlineFor(old), signal);
      if (n === 0)
        return {
          how: `no policy selects ${ends.server.name}: the other client ${ends.denied.name} connects, as it must`,
          facts: { policies: 0, deletedBefore: old, openMs: open.ms },
        };
      const policies = runPolicies(LAB_POD_NAMESPACE, target.runId, n);
      const began = Date.now();
      await this.create(policies, signal);
      const apiMs = Date.now() - began;
      const on = await waitForPolicy('enforced', probeEnds, began, deadlineFor(n), signal);
      return {
        how: `${n} NetworkPolicies select ${ends.server.name}: ${ends.denied.name} is blocked (${on.denied}), the client ${probeEnds.allowed.name} connects; enforced by ${this.o.enforcer}`,
        enforcementMs: on.ms,
        apiMs,
        facts: { policies: n, denied: ends.denied.name, allowed: probeEnds.allowed.name, polls: on.polls },
      };
    } finally {
      await listener.stop();
    }
  }

  private async create(policies: V1NetworkPolicy[], signal: AbortSignal): Promise<void> {
    const queue = [...policies];
    // Fillers in parallel (8 at a time), the allow policy last on its own.
    const last = queue.pop() as V1NetworkPolicy;
    const worker = async (): Promise<void> => {
      for (let p = queue.shift(); p; p = queue.shift()) {
        if (signal.aborted) throw new CniBenchError(ErrorCodes.CANCELLED, 'cancelled while creating policies');
        await this.net.createNamespacedNetworkPolicy({ namespace: LAB_POD_NAMESPACE, body: p });
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    await this.net.createNamespacedNetworkPolicy({ namespace: LAB_POD_NAMESPACE, body: last });
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
  private ends(target: ConditionTarget): Ends {
    const all = this.o.plan.nodes.flatMap((n) =>
      n.pods.map((p, j) => ({ ns: p.ns, ip: p.ip, name: labPodName(n.index, j) })),
    );
    const server = all.find((p) => p.ip === target.serverPodIp);
    if (!server) throw new CniBenchError(ErrorCodes.LAB, `no lab pod has the server's address ${target.serverPodIp}`);
    const clients = all.filter((p) => target.clientPodIps.includes(p.ip) && p !== server);
    if (!clients.length) throw new CniBenchError(ErrorCodes.LAB, 'no lab pod has a client address');
    const denied = all.find((p) => p !== server && !clients.includes(p));
    if (!denied)
      throw new CniBenchError(
        ErrorCodes.LAB,
        'no lab pod is free to act as the denied client (every pod is the server or a client): a policy cannot be verified',
      );
    return { server, clients, denied };
  }
}
