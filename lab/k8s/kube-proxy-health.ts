/**
 * Reading a node's kube-proxy /healthz from the lab process. kube-proxy serves
 * it on the node namespace's loopback (KUBE_PROXY_HEALTHZ), which nothing
 * outside reaches; a forwarder in that namespace (forwarder.ts) listens on a
 * unix socket in the lab's run directory (filesystem paths are shared across
 * namespaces) and pipes to it, so a reading costs one local HTTP request,
 * not a process start, and a restart's ready time is not blurred by one.
 */
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { type Component, startComponent } from './component.js';
import { waitUntil } from './control-plane.js';
import { KUBE_PROXY_HEALTHZ, type KubeProxyHealth, parseKubeProxyHealthz } from './kube-proxy.js';

const FORWARDER = fileURLToPath(new URL('./forwarder.js', import.meta.url));

export interface KubeProxyHealthReader {
  /** One /healthz reading; throws when nothing answers. */
  read(): Promise<KubeProxyHealth>;
  /**
   * Polls until kube-proxy answers 200 and every proxier has finished a sync
   * at or after `sinceMs` (a restarted one has synced the rules it found);
   * resolves with when that sync was reported, ms since the epoch.
   */
  syncedSince(sinceMs: number, timeoutMs: number, alive: () => boolean, signal?: AbortSignal): Promise<number>;
  stop(): Promise<void>;
}

function get(socketPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: '/healthz', timeout: 2000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('kube-proxy /healthz: timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** Starts the forwarder in `netns` and resolves once it listens. */
export async function startKubeProxyHealthReader(
  dir: string,
  name: string,
  netns: string,
): Promise<KubeProxyHealthReader> {
  const socketPath = join(dir, `${name}-healthz.sock`);
  rmSync(socketPath, { force: true });
  const forwarder: Component = startComponent(dir, `${name}-healthz-forwarder`, 'ip', [
    'netns',
    'exec',
    netns,
    process.execPath,
    FORWARDER,
    socketPath,
    KUBE_PROXY_HEALTHZ,
  ]);
  const stop = async (): Promise<void> => {
    await forwarder.stop();
    rmSync(socketPath, { force: true });
  };
  try {
    await waitUntil(
      `the kube-proxy healthz forwarder in ${netns}`,
      [forwarder],
      async () => forwarder.tail(3).includes('forwarder: listening'),
      15_000,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  const read = async (): Promise<KubeProxyHealth> => {
    const r = await get(socketPath);
    return parseKubeProxyHealthz(r.status, r.body);
  };
  return {
    read,
    stop,
    syncedSince: async (sinceMs, timeoutMs, alive, signal) => {
      const deadline = Date.now() + timeoutMs;
      let last = '';
      for (;;) {
        if (signal?.aborted)
          throw new CniBenchError(ErrorCodes.CANCELLED, `waiting for kube-proxy in ${netns}: aborted`);
        if (!alive()) throw new CniBenchError(ErrorCodes.LAB, `kube-proxy in ${netns} exited (last health: ${last})`);
        try {
          const h = await read();
          last = `HTTP ${h.status}, synced ${h.syncedMs ?? 'never'}`;
          if (h.status === 200 && h.syncedMs !== undefined && h.syncedMs >= sinceMs) return h.syncedMs;
        } catch (err) {
          last = (err as Error).message;
        }
        if (Date.now() > deadline)
          throw new CniBenchError(
            ErrorCodes.TIMEOUT,
            `kube-proxy in ${netns}: not healthy with a sync after ${timeoutMs} ms (last: ${last})`,
          );
        await sleep(50);
      }
    },
  };
}
