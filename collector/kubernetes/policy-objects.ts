/**
 * The NetworkPolicy objects a cluster run's policy condition creates, as data:
 * the lab's shapes (lab/policy/objects.ts) in a cluster. The collector puts a
 * role label (POLICY_ROLE_LABEL: server or client) on the run's agent pods
 * (`patch pods`, granted only with the opt-in and narrowed by the chart's
 * ValidatingAdmissionPolicy to adding or removing exactly that label), and the
 * policies select by identity: the server pod by its role, the clients by
 * theirs (podSelector), which every enforcer honours (kube-router, Cilium,
 * whose CIDR rules do not match pods). The first policy allows the clients;
 * the others ("fillers", for N > 1 and the policy-count sweep) select the
 * server too and each allow one port from a label no pod carries, so every
 * policy is work for the enforcer and none lets the denied agent in. Every
 * object carries the collector's labels and the run's, which is how revert
 * and start-up cleanup find them. Pure.
 */
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { MANAGED_BY, MANAGED_BY_LABEL, ROLE_LABEL, RUN_ID_LABEL } from './objects.js';

/** The ROLE_LABEL value of every policy a run creates. */
export const POLICY_ROLE = 'policy-condition';

/**
 * The one label the collector may put on (and take off) an agent pod: the
 * chart's ValidatingAdmissionPolicy (templates/admission-policy.yaml) names it
 * and its values; keep the three in step.
 */
export const POLICY_ROLE_LABEL = 'cni-bench.io/policy-role';
export type PodRole = 'server' | 'client';
export const POD_ROLES: readonly PodRole[] = ['server', 'client'];

/** Pure: the JSON merge patch that sets (or, with null, removes) a pod's role label and nothing else. */
export function roleLabelPatch(role: PodRole | null): { metadata: { labels: Record<string, string | null> } } {
  return { metadata: { labels: { [POLICY_ROLE_LABEL]: role } } };
}

/** Selects the agent pods carrying a role label (any value): revert and start-up cleanup. */
export function labelledPodsSelector(agents: Record<string, string>): string {
  return [...Object.entries(agents).map(([k, v]) => `${k}=${v}`), POLICY_ROLE_LABEL].join(',');
}

const withRole = (agents: Record<string, string>, role: PodRole) => ({ ...agents, [POLICY_ROLE_LABEL]: role });

/** Selects every condition policy of any run (start-up cleanup) or of one run. */
export function policySelector(runId?: string): string {
  return `${MANAGED_BY_LABEL}=${MANAGED_BY},${ROLE_LABEL}=${POLICY_ROLE}${runId ? `,${RUN_ID_LABEL}=${runId}` : ''}`;
}

/** Pure: an equality label selector ("a=b,c=d", as the chart passes the agent selector) as matchLabels. */
export function matchLabelsOf(selector: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of selector.split(',').map((p) => p.trim())) {
    const m = /^([A-Za-z0-9./_-]+)\s*==?\s*([A-Za-z0-9._-]*)$/.exec(part);
    if (!m?.[1])
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        `agentSelector: '${selector}' is not a list of key=value pairs (a NetworkPolicy podSelector needs equality terms)`,
        { details: { field: 'agentSelector' } },
      );
    out[m[1]] = m[2] ?? '';
  }
  return out;
}

function meta(namespace: string, runId: string, name: string): V1NetworkPolicy['metadata'] {
  return {
    name: `cnib-${runId}-${name}`.slice(0, 253),
    namespace,
    labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [RUN_ID_LABEL]: runId, [ROLE_LABEL]: POLICY_ROLE },
  };
}

/** Lets the pods in the client role into the pod in the server role. */
export function allowClientsPolicy(namespace: string, runId: string, agents: Record<string, string>): V1NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: meta(namespace, runId, 'allow-clients'),
    spec: {
      podSelector: { matchLabels: withRole(agents, 'server') },
      policyTypes: ['Ingress'],
      ingress: [{ _from: [{ podSelector: { matchLabels: withRole(agents, 'client') } }] }],
    },
  };
}

export function fillerPolicy(
  namespace: string,
  runId: string,
  agents: Record<string, string>,
  i: number,
): V1NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: meta(namespace, runId, `filler-${i}`),
    spec: {
      podSelector: { matchLabels: withRole(agents, 'server') },
      policyTypes: ['Ingress'],
      ingress: [
        {
          _from: [{ podSelector: { matchLabels: { 'cni-bench.io/policy-filler': `f${i}` } } }],
          ports: [{ protocol: 'TCP', port: 10_000 + (i % 50_000) }],
        },
      ],
    },
  };
}

/** N policies in creation order: the fillers first, the one that lets the clients in last. */
export function clusterRunPolicies(
  namespace: string,
  runId: string,
  agents: Record<string, string>,
  n: number,
): V1NetworkPolicy[] {
  if (n <= 0) return [];
  return [
    ...Array.from({ length: n - 1 }, (_, i) => fillerPolicy(namespace, runId, agents, i + 1)),
    allowClientsPolicy(namespace, runId, agents),
  ];
}
