/**
 * The cluster's ConditionDriver (core/conditions.ts). NetworkPolicy conditions
 * (the chart's rbac.networkPolicy.enabled grant): the run's server and client
 * agent pods get a role label (POLICY_ROLE_LABEL, the only pod change the
 * chart's admission policy lets the collector make), labelled policies in the
 * run's namespace select by it (policy-objects.ts), and they are verified in
 * the dataplane through the agents (collector/runs/condition-probes.ts): an
 * agent that is neither the server nor a client must be refused, every client
 * must connect; revert deletes by the run's label, takes the role labels off
 * and is verified by the denied agent connecting again. L7 policy is a
 * CiliumNetworkPolicy behind its own opt-in (conditions-l7.ts); Hubble and
 * encryption are refused with what cilium-config says (conditions-cilium.ts).
 * The loop that waits for enforcement is the lab's (core/policy-verify.ts).
 */
import { type CoreV1Api, type KubeConfig, NetworkingV1Api, type V1NetworkPolicy } from '@kubernetes/client-node';
import type {
  ConditionDriver,
  ConditionEvidence,
  ConditionProbes,
  ConditionRequest,
  ConditionTarget,
} from '../../core/conditions.js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { applyPolicies, enforcedEvidence } from '../../core/policy-apply.js';
import { type PolicyProbeTimes, type ProbeEnd, waitForPolicyWith } from '../../core/policy-verify.js';
import { CiliumConfig } from './cilium-config.js';
import { encryptionRefusal, hubbleRefusal, l7Refusal } from './conditions-cilium.js';
import { ClusterHubble } from './conditions-hubble.js';
import { ClusterL7 } from './conditions-l7.js';
import { PodRoles } from './conditions-roles.js';
import { l7Selector } from './l7-objects.js';
import { deleteListed, type Pacer, statusOf } from './pacer.js';
import { clusterRunPolicies, matchLabelsOf, POLICY_ROLE_LABEL, policySelector } from './policy-objects.js';

/** Where the server agent's verification listener binds (policies do not restrict ports). */
export const CLUSTER_PROBE_PORT = 39_099;

/** Probes through agents start a process on the agent: a slower fast probe than the lab's. */
const AGENT_PROBE_TIMES: PolicyProbeTimes = Object.freeze({ fastMs: 500, confirmMs: 2000, pauseMs: 100 });

/** How long enforcement may take per step before the condition fails: 90 s plus 50 ms per policy. */
function deadlineFor(policies: number): number {
  return 90_000 + 50 * policies;
}

export interface ClusterConditionsOptions {
  /** The run's namespace: the collector's, where the agents run. */
  namespace: string;
  agentSelector: string;
  ciliumNamespace: string;
  /** The operator's opt-in to change cilium-config (rbac.ciliumConfig.write). */
  allowCiliumConfigChange: boolean;
  /** The operator's opt-in to NetworkPolicy conditions (rbac.networkPolicy.enabled grants the calls). */
  allowNetworkPolicy: boolean;
  /** The operator's opt-in to the L7 condition's CiliumNetworkPolicy (rbac.ciliumNetworkPolicy.enabled). */
  allowCiliumNetworkPolicy?: boolean;
  log: Logger;
}

interface Ends {
  probes: ConditionProbes;
  denied: ProbeEnd;
  serverIp: string;
}

export class ClusterConditions implements ConditionDriver {
  private readonly net: NetworkingV1Api;
  private readonly agents: Record<string, string>;
  /** Hubble on against off with the cilium-config opt-in (conditions-hubble.ts). */
  private readonly hubble: ClusterHubble;
  private readonly l7: ClusterL7;
  private readonly roles: PodRoles;

  constructor(
    kc: KubeConfig,
    private readonly core: CoreV1Api,
    private readonly pacer: Pacer,
    private readonly o: ClusterConditionsOptions,
  ) {
    this.net = kc.makeApiClient(NetworkingV1Api);
    this.agents = matchLabelsOf(o.agentSelector);
    this.hubble = new ClusterHubble(
      new CiliumConfig(kc, core, pacer, o.ciliumNamespace, o.log),
      o.ciliumNamespace,
      o.log,
    );
    this.l7 = new ClusterL7(kc, pacer, o.namespace, this.agents);
    this.roles = new PodRoles(core, pacer, o.namespace, o.agentSelector, this.agents);
  }

  /** With the cilium-config opt-in: puts back enable-hubble a collector that died with Hubble on left changed. */
  recoverHubble(): Promise<boolean> {
    return this.hubble.recover();
  }

  get description(): string {
    return `NetworkPolicy in ${this.o.namespace}, enforced by the cluster's dataplane, verified through the agents`;
  }

  /** Removes condition policies and pod role labels an earlier collector left behind; returns how many policies. */
  async init(): Promise<number> {
    const n = this.o.allowNetworkPolicy ? await this.deleteBy(policySelector()) : 0;
    const l7 = this.o.allowCiliumNetworkPolicy ? await this.l7.deleteBy(l7Selector()) : 0;
    await this.roles.setRoles(new Map());
    return n + l7;
  }

  async apply(req: ConditionRequest, target: ConditionTarget, signal: AbortSignal): Promise<ConditionEvidence> {
    if (req.kind === 'networkPolicy' || req.kind === 'policyCount') {
      if (!this.o.allowNetworkPolicy)
        throw new CniBenchError(
          ErrorCodes.VALIDATION,
          `${req.kind}: this collector may not create NetworkPolicies (chart value rbac.networkPolicy.enabled=false); helm upgrade with --set rbac.networkPolicy.enabled=true to allow create, list and delete of networkpolicies in ${this.o.namespace} only`,
          { details: { field: `conditions.${req.kind}` } },
        );
      return this.policies(req.policies ?? (req.kind === 'networkPolicy' ? 1 : 0), target, signal);
    }
    if (req.kind === 'hubble' && this.o.allowCiliumConfigChange) return this.hubble.apply(target, signal);
    if (req.kind === 'l7Policy') return this.applyL7(req, target, signal);
    const config = await this.readCiliumConfig();
    const ns = this.o.ciliumNamespace;
    const why =
      req.kind === 'hubble' ? hubbleRefusal(config, ns, this.o.allowCiliumConfigChange) : encryptionRefusal(config, ns);
    throw new CniBenchError(ErrorCodes.VALIDATION, why, { details: { field: `conditions.${req.kind}` } });
  }

  async revert(req: ConditionRequest, target: ConditionTarget): Promise<ConditionEvidence> {
    if (req.kind === 'hubble') return this.hubble.revert(target);
    if (req.kind === 'l7Policy' && this.o.allowCiliumNetworkPolicy)
      return this.l7.revert(req.urlPath ?? '/', target, () => this.roles.setRoles(new Map()));
    if (req.kind !== 'networkPolicy' && req.kind !== 'policyCount') return { how: 'nothing was applied', facts: {} };
    const began = Date.now();
    const deleted = await this.deleteBy(policySelector(target.runId));
    const unlabelled = await this.roles.setRoles(new Map());
    const apiMs = Date.now() - began;
    const left = await this.roles.labelledPods();
    if (left.length)
      throw new CniBenchError(
        ErrorCodes.KUBERNETES,
        `revert: the pods ${left.join(', ')} still carry ${POLICY_ROLE_LABEL} after it was removed`,
      );
    const ends = this.ends(target);
    const listener = await ends.probes.listen(CLUSTER_PROBE_PORT);
    try {
      const open = await waitForPolicyWith(
        ends.probes.probe,
        'open',
        { denied: ends.denied, allowed: ends.probes.allowed, serverIp: ends.serverIp, port: CLUSTER_PROBE_PORT },
        began,
        deadlineFor(deleted),
        undefined,
        AGENT_PROBE_TIMES,
      );
      return {
        how: `${deleted} NetworkPolicies deleted by the run's label and ${POLICY_ROLE_LABEL} taken off ${unlabelled} pods; the denied agent ${ends.denied.name} connects to the server again`,
        enforcementMs: open.ms,
        apiMs,
        facts: { deleted, unlabelled, polls: open.polls },
      };
    } finally {
      await listener.stop();
    }
  }

  /** L7: refused without the opt-in or without Cilium; else the run's pods labelled and the rule created and verified. */
  private async applyL7(
    req: ConditionRequest,
    target: ConditionTarget,
    signal: AbortSignal,
  ): Promise<ConditionEvidence> {
    if (!this.o.allowCiliumNetworkPolicy)
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        `l7Policy: this collector may not create CiliumNetworkPolicies (chart value rbac.ciliumNetworkPolicy.enabled=false); helm upgrade with --set rbac.ciliumNetworkPolicy.enabled=true to allow create, list and delete of ciliumnetworkpolicies in ${this.o.namespace} only`,
        { details: { field: 'conditions.l7Policy' } },
      );
    const config = await this.readCiliumConfig();
    if (!config)
      throw new CniBenchError(ErrorCodes.VALIDATION, l7Refusal(config, this.o.ciliumNamespace), {
        details: { field: 'conditions.l7Policy' },
      });
    await this.roles.setRoles(await this.roles.rolesOf(target));
    return this.l7.apply(req.urlPath ?? '/', target, config, signal);
  }

  /** Replaces the run's policies with `n` fresh ones and verifies enforcement; n = 0 verifies that nothing is enforced. */
  private async policies(n: number, target: ConditionTarget, signal: AbortSignal): Promise<ConditionEvidence> {
    const ends = this.ends(target);
    const probeEnds = {
      denied: ends.denied,
      allowed: ends.probes.allowed,
      serverIp: ends.serverIp,
      port: CLUSTER_PROBE_PORT,
    };
    const listener = await ends.probes.listen(CLUSTER_PROBE_PORT, signal);
    try {
      const cleared = Date.now();
      const old = await this.deleteBy(policySelector(target.runId));
      const wait = (want: 'open' | 'enforced', since: number, deadline: number) =>
        waitForPolicyWith(ends.probes.probe, want, probeEnds, since, deadline, signal, AGENT_PROBE_TIMES);
      const open = await wait('open', cleared, deadlineFor(old));
      if (n === 0)
        return {
          how: `no policy selects the agents: the denied agent ${ends.denied.name} connects, as it must`,
          facts: { policies: 0, deletedBefore: old, openMs: open.ms },
        };
      const roles = await this.roles.rolesOf(target);
      const labelled = await this.roles.setRoles(roles);
      const applied = await applyPolicies(
        clusterRunPolicies(this.o.namespace, target.runId, this.agents, n),
        (p) => this.createOne(p),
        (since) => wait('enforced', since, deadlineFor(n)),
        signal,
      );
      const allowed = ends.probes.allowed.map((c) => c.name).join(', ');
      const evidence = enforcedEvidence(n, applied, ends.denied.name, allowed);
      return {
        how: `${n} NetworkPolicies in ${this.o.namespace} select the server's pod by ${POLICY_ROLE_LABEL}=server and let in ${POLICY_ROLE_LABEL}=client: ${ends.denied.name} is blocked (${applied.on.denied}), the clients ${allowed} connect; ${applied.afterLastCreateMs} ms after the last object was created`,
        ...evidence,
        facts: {
          ...evidence.facts,
          labelled,
          server: [...roles].find(([, r]) => r === 'server')?.[0] ?? '',
        },
      };
    } finally {
      await listener.stop();
    }
  }

  /** One policy created through the pacer (the fillers go in parallel: core/policy-apply.ts). */
  private createOne(p: V1NetworkPolicy) {
    return this.pacer.run(`create networkpolicy ${this.o.namespace}/${p.metadata?.name}`, () =>
      this.net.createNamespacedNetworkPolicy({ namespace: this.o.namespace, body: p }),
    );
  }

  /** Deletes the policies `selector` matches in the run's namespace; returns how many there were. */
  private async deleteBy(labelSelector: string): Promise<number> {
    const namespace = this.o.namespace;
    const list = await this.pacer.run(`list networkpolicies ${namespace}`, () =>
      this.net.listNamespacedNetworkPolicy({ namespace, labelSelector }),
    );
    return deleteListed(
      this.pacer,
      `networkpolicy ${namespace}`,
      list.items.map((p) => p.metadata?.name ?? ''),
      (name) => this.net.deleteNamespacedNetworkPolicy({ name, namespace }),
    );
  }

  /** cilium-config's data; undefined when the cluster has none (no Cilium). */
  private async readCiliumConfig(): Promise<Record<string, string> | undefined> {
    const namespace = this.o.ciliumNamespace;
    try {
      // Not through the pacer, which wraps the API's status: a 404 here means no Cilium.
      const cm = await this.core.readNamespacedConfigMap({ name: 'cilium-config', namespace });
      return cm.data ?? {};
    } catch (err) {
      if (statusOf(err).status === 404) return undefined;
      throw new CniBenchError(
        ErrorCodes.KUBERNETES,
        `read configmap ${namespace}/cilium-config: ${statusOf(err).status ?? (err as Error).message}`,
        { cause: err },
      );
    }
  }

  private ends(target: ConditionTarget): Ends {
    const probes = target.probes;
    if (!probes)
      throw new CniBenchError(ErrorCodes.INTERNAL, 'a cluster policy condition needs probes through the agents');
    if (!probes.allowed.length)
      throw new CniBenchError(ErrorCodes.VALIDATION, 'the run has no client agent to verify a policy with');
    const denied = probes.others[0];
    if (!denied)
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        'a policy condition is verified by an agent that is neither the server nor a client being refused, and every connected agent is one of them: it needs one more node with an agent',
        { details: { field: 'conditions' } },
      );
    return { probes, denied, serverIp: target.serverPodIp };
  }
}
