/**
 * @kubernetes/client-node 2.x builds a new undici Agent for every request
 * (KubeConfig.applySecurityAuthentication calls createDispatcher each time and
 * caches nothing), so every API call opens a fresh TCP connection and does a
 * full TLS handshake with the client certificate: a sweep step of 10,000
 * Services (20,000 calls) spent most of its time in handshakes, on both the
 * collector's and the apiserver's CPU. `reuseConnections` makes a KubeConfig
 * hand out one keep-alive Agent per cluster, user and credentials instead, as
 * client-go does; a changed certificate or CA (a rotated file) gets a new one.
 * Bearer tokens travel in headers, re-read per request as before.
 */
import { createHash } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';

interface DispatcherMaker {
  createDispatcher?: (cluster: { server?: string; name?: string } | null, opts: Record<string, unknown>) => unknown;
}

const POOLED = Symbol('cni-bench.pooled-connections');

/** Pure: what decides whether two requests may share an Agent (server, user, TLS material). */
export function dispatcherKey(
  cluster: { server?: string; name?: string } | null,
  user: string,
  opts: Record<string, unknown>,
): string {
  const h = createHash('sha256');
  h.update(`${cluster?.server ?? ''}\n${user}\n`);
  for (const k of ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername']) {
    const v = opts[k];
    h.update(`${k}=`);
    if (v !== undefined) h.update(Buffer.isBuffer(v) ? v : String(v));
    h.update('\n');
  }
  return h.digest('hex');
}

/**
 * Makes `kc` reuse one keep-alive connection pool per cluster and credentials
 * for every API client made from it (idempotent; returns `kc`). When the
 * library no longer has the hook, `kc` is left as it is: slower, never wrong.
 */
export function reuseConnections(kc: KubeConfig): KubeConfig {
  const target = kc as unknown as DispatcherMaker & { [POOLED]?: true };
  const make = target.createDispatcher;
  if (typeof make !== 'function' || target[POOLED]) return kc;
  const pool = new Map<string, unknown>();
  target.createDispatcher = (cluster, opts) => {
    const key = dispatcherKey(cluster, kc.getCurrentUser()?.name ?? '', opts);
    if (pool.has(key)) return pool.get(key);
    const made = make.call(kc, cluster, opts);
    if (made !== undefined) pool.set(key, made);
    return made;
  };
  target[POOLED] = true;
  return kc;
}
