/**
 * The NetworkPolicy objects a run's policy condition creates, as data. The
 * first policy selects the server pod and allows ingress only from the run's
 * clients (by a role label the lab puts on those pods); the others ("fillers",
 * for N > 1 and the policy-count sweep) select the server pod too, each
 * allowing one port from a label no pod carries, so every policy is real work
 * for the enforcer and none opens the server to the denied client. Every
 * object carries the run's label, which is how revert finds them. Pure.
 */
import type { V1NetworkPolicy } from '@kubernetes/client-node';

export const RUN_LABEL = 'cni-bench.io/run';
export const ROLE_LABEL = 'cni-bench.io/policy-role';
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'cni-bench' };

export function allowClientPolicy(namespace: string, runId: string): V1NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: `cnib-${runId}-allow-client`, namespace, labels: { [RUN_LABEL]: runId, ...MANAGED_BY } },
    spec: {
      podSelector: { matchLabels: { [ROLE_LABEL]: 'server' } },
      policyTypes: ['Ingress'],
      ingress: [{ _from: [{ podSelector: { matchLabels: { [ROLE_LABEL]: 'client' } } }] }],
    },
  };
}

export function fillerPolicy(namespace: string, runId: string, i: number): V1NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: `cnib-${runId}-filler-${i}`, namespace, labels: { [RUN_LABEL]: runId, ...MANAGED_BY } },
    spec: {
      podSelector: { matchLabels: { [ROLE_LABEL]: 'server' } },
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
export function runPolicies(namespace: string, runId: string, n: number): V1NetworkPolicy[] {
  if (n <= 0) return [];
  return [
    ...Array.from({ length: n - 1 }, (_, i) => fillerPolicy(namespace, runId, i + 1)),
    allowClientPolicy(namespace, runId),
  ];
}
