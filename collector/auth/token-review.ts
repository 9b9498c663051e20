/**
 * Agent identity in a cluster: each agent pod presents its projected
 * ServiceAccount token (audience `cni-bench`, bound to the pod and so to its
 * node); the collector asks the API server's TokenReview API whether it is
 * valid, for this audience, of the agents' ServiceAccount, and which node the
 * pod runs on (`authentication.kubernetes.io/node-name`, set by the API server
 * for pod-bound tokens). Per-node certificates cannot be issued by a chart
 * that does not know the nodes; the kubelet already issues per-pod tokens.
 */
import { createHash } from 'node:crypto';
import { AuthenticationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { TokenReviewer } from './principal.js';

export const AGENT_TOKEN_AUDIENCE = 'cni-bench';
const NODE_NAME_EXTRA = 'authentication.kubernetes.io/node-name';
const CACHE_MS = 60_000;
const CACHE_MAX = 10_000;

/** What a TokenReview status says about an agent token: its node, or why not. */
export function nodeOfReview(
  status:
    | { authenticated?: boolean; audiences?: string[]; user?: { username?: string; extra?: Record<string, string[]> } }
    | undefined,
  serviceAccount: string,
): { node?: string; why?: string } {
  if (!status?.authenticated) return { why: 'not authenticated' };
  if (status.audiences && !status.audiences.includes(AGENT_TOKEN_AUDIENCE))
    return { why: `audience is not ${AGENT_TOKEN_AUDIENCE}` };
  const [ns, name] = serviceAccount.split('/');
  if (serviceAccount && status.user?.username !== `system:serviceaccount:${ns}:${name}`)
    return { why: `not the agents' ServiceAccount (${status.user?.username ?? 'none'})` };
  const node = status.user?.extra?.[NODE_NAME_EXTRA]?.[0];
  if (!node) return { why: 'the token is not bound to a pod on a node' };
  return { node };
}

/** A reviewer with a short positive cache (keyed by the token's hash), so reconnects do not each cost an API call. */
export function tokenReviewer(
  kc: KubeConfig,
  serviceAccount: string,
  onRefusal?: (why: string) => void,
): TokenReviewer {
  const api = kc.makeApiClient(AuthenticationV1Api);
  const cache = new Map<string, { node: string; until: number }>();
  return async (token) => {
    const key = createHash('sha256').update(token).digest('hex');
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.node;
    const review = await api.createTokenReview({
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token, audiences: [AGENT_TOKEN_AUDIENCE] },
      },
    });
    const { node, why } = nodeOfReview(review.status, serviceAccount);
    if (!node) {
      onRefusal?.(why ?? 'refused');
      return undefined;
    }
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(key, { node, until: Date.now() + CACHE_MS });
    return node;
  };
}
