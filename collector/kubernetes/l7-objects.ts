/**
 * The CiliumNetworkPolicy a cluster run's l7Policy condition creates, as data:
 * on the pod in the server role, from the pods in the client role, an HTTP
 * rule allowing GET on the measured path on every port an HTTP server of the
 * catalogue listens on (and the verification port), and every other port open
 * to the clients at L3/L4, so the run's other measurements still reach the
 * server. Cilium's policy map prefers the port-specific entry, so HTTP on
 * those ports goes through its proxy. Labelled like the NetworkPolicies, with
 * its own role, for revert and start-up cleanup. Pure.
 */
import { SERVERS } from '../../core/tool-catalogue/index.js';
import { MANAGED_BY, MANAGED_BY_LABEL, ROLE_LABEL, RUN_ID_LABEL } from './objects.js';
import { POLICY_ROLE_LABEL } from './policy-objects.js';

/** The ROLE_LABEL value of the L7 rule a run creates. */
export const L7_ROLE = 'l7-condition';
export const CNP = Object.freeze({ group: 'cilium.io', version: 'v2', plural: 'ciliumnetworkpolicies' });

/** Where the verification's HTTP server listens in the server's pod. */
export const L7_PROBE_PORT = 39_098;

/** Selects every L7 rule of any run (start-up cleanup) or of one run. */
export function l7Selector(runId?: string): string {
  return `${MANAGED_BY_LABEL}=${MANAGED_BY},${ROLE_LABEL}=${L7_ROLE}${runId ? `,${RUN_ID_LABEL}=${runId}` : ''}`;
}

/** Pure: the measured path as Cilium's HTTP rule wants it (a regular expression matching it alone). */
export function pathRegex(path: string): string {
  const p = path.startsWith('/') ? path : `/${path}`;
  return p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Pure: a path the rule does not allow (the verification's denied GET). */
export function deniedPath(allowed: string): string {
  const d = '/cni-bench-l7-denied';
  return allowed === d ? `${d}-2` : d;
}

/** The ports the HTTP rule covers: the verification's and every catalogue HTTP server's, sorted. */
export function l7Ports(): number[] {
  const http = SERVERS.filter((t) => t.server.serves === 'http').map((t) => t.server.port);
  return [...new Set([L7_PROBE_PORT, ...http])].sort((a, b) => a - b);
}

export interface CiliumNetworkPolicy {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec: Record<string, unknown>;
}

export function l7Policy(
  namespace: string,
  runId: string,
  agents: Record<string, string>,
  urlPath: string,
): CiliumNetworkPolicy {
  const clients = [{ matchLabels: { ...agents, [POLICY_ROLE_LABEL]: 'client' } }];
  return {
    apiVersion: `${CNP.group}/${CNP.version}`,
    kind: 'CiliumNetworkPolicy',
    metadata: {
      name: `cnib-${runId}-l7`.slice(0, 253),
      namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [RUN_ID_LABEL]: runId, [ROLE_LABEL]: L7_ROLE },
    },
    spec: {
      endpointSelector: { matchLabels: { ...agents, [POLICY_ROLE_LABEL]: 'server' } },
      ingress: [
        { fromEndpoints: clients },
        {
          fromEndpoints: clients,
          toPorts: [
            {
              ports: l7Ports().map((p) => ({ port: String(p), protocol: 'TCP' })),
              rules: { http: [{ method: 'GET', path: pathRegex(urlPath) }] },
            },
          ],
        },
      ],
    },
  };
}
