/**
 * The role labels of the policy conditions on the run's agent pods
 * (POLICY_ROLE_LABEL: server or client), found by the run's pod addresses.
 * Every change is a merge patch of that one label, which is all the chart's
 * ValidatingAdmissionPolicy lets the collector's ServiceAccount change on a
 * pod; setRoles(new Map()) takes them all off (revert, start-up cleanup).
 */
import { type CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { ConditionTarget } from '../../core/conditions.js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Pacer } from './pacer.js';
import { labelledPodsSelector, POLICY_ROLE_LABEL, type PodRole, roleLabelPatch } from './policy-objects.js';

export class PodRoles {
  constructor(
    private readonly core: CoreV1Api,
    private readonly pacer: Pacer,
    private readonly namespace: string,
    private readonly agentSelector: string,
    private readonly agents: Record<string, string>,
  ) {}

  /** The agent pods behind the target's addresses, by name, with their role. */
  async rolesOf(target: ConditionTarget): Promise<Map<string, PodRole>> {
    const pods = await this.agentPods();
    const byIp = (ip: string) => pods.find((p) => p.ip === ip)?.name;
    const server = byIp(target.serverPodIp);
    if (!server)
      throw new CniBenchError(
        ErrorCodes.KUBERNETES,
        `no agent pod in ${this.namespace} (${this.agentSelector}) has the server's address ${target.serverPodIp}`,
      );
    const roles = new Map<string, PodRole>([[server, 'server']]);
    for (const ip of target.clientPodIps) {
      const name = byIp(ip);
      if (!name)
        throw new CniBenchError(
          ErrorCodes.KUBERNETES,
          `no agent pod in ${this.namespace} (${this.agentSelector}) has the client's address ${ip}`,
        );
      if (name !== server) roles.set(name, 'client');
    }
    return roles;
  }

  async agentPods(): Promise<{ name: string; ip: string; role?: string }[]> {
    const namespace = this.namespace;
    const list = await this.pacer.run(`list pods ${namespace}`, () =>
      this.core.listNamespacedPod({ namespace, labelSelector: this.agentSelector }),
    );
    return list.items.map((p) => ({
      name: p.metadata?.name ?? '',
      ip: p.status?.podIP ?? '',
      role: p.metadata?.labels?.[POLICY_ROLE_LABEL],
    }));
  }

  async labelledPods(): Promise<string[]> {
    const namespace = this.namespace;
    const list = await this.pacer.run(`list pods ${namespace}`, () =>
      this.core.listNamespacedPod({ namespace, labelSelector: labelledPodsSelector(this.agents) }),
    );
    return list.items.map((p) => p.metadata?.name ?? '');
  }

  /**
   * Gives exactly the pods in `roles` their role label and takes it off every
   * other agent pod (a merge patch of that one label, which is all the chart's
   * admission policy lets this ServiceAccount change); returns how many pods changed.
   */
  async setRoles(roles: Map<string, PodRole>): Promise<number> {
    const namespace = this.namespace;
    const patch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const changes = (await this.agentPods()).filter((p) => (roles.get(p.name) ?? undefined) !== p.role);
    await Promise.all(
      changes.map((p) => {
        const role = roles.get(p.name) ?? null;
        return this.pacer.run(`patch pod ${namespace}/${p.name} ${POLICY_ROLE_LABEL}=${role ?? '(removed)'}`, () =>
          this.core.patchNamespacedPod({ name: p.name, namespace, body: roleLabelPatch(role) }, patch),
        );
      }),
    );
    return changes.length;
  }
}
