/**
 * Lets a process inside a network namespace reach the harness apiserver, which
 * listens on 127.0.0.1 of the root namespace, without routing anything.
 *
 *   netns: client -> 127.0.0.1:6443 (kube-proxy-api-forwarder.js, run with `ip netns exec`)
 *          -> unix socket in the harness directory (filesystem paths are shared across netns)
 *   root:  net.Server on that socket (this module, in the test process) -> 127.0.0.1:<apiserver port>
 *
 * Bytes pass through untouched (TLS is end to end); the apiserver certificate
 * has SAN IP:127.0.0.1, so `https://127.0.0.1:6443` with the harness CA
 * verifies inside the namespace. No traffic leaves the machine.
 */

import { rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type Component, startComponent } from './component.js';

/** The port the forwarder listens on inside the namespace (the apiserver's usual one). */
export const BRIDGE_PORT = 6443;
const FORWARDER = fileURLToPath(new URL('./kube-proxy-api-forwarder.js', import.meta.url));

export interface ApiBridgeOptions {
  /** Harness directory: holds the socket and the forwarder's log. */
  dir: string;
  /** The apiserver URL in the root namespace, e.g. cp.server. */
  apiserver: string;
  netns: string;
  port?: number;
}

export interface ApiBridge {
  /** The apiserver's URL as seen from inside the namespace. */
  readonly server: string;
  readonly socketPath: string;
  /** Connections piped so far (a test can tell the bridge was really used). */
  connections(): number;
  stop(): Promise<void>;
}

function apiPort(apiserver: string): number {
  const u = new URL(apiserver);
  if (u.hostname !== '127.0.0.1' || !u.port)
    throw new Error(`api-bridge: expected an apiserver on https://127.0.0.1:<port>, got ${apiserver}`);
  return Number(u.port);
}

/** The root-namespace half: every connection on the unix socket piped to 127.0.0.1:port. */
async function listenUnix(
  socketPath: string,
  port: number,
  onConnection: () => void,
): Promise<{ server: Server; open: Set<Socket> }> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    onConnection();
    const upstream = connect(port, '127.0.0.1');
    open.add(client).add(upstream);
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream).pipe(client);
  });
  rmSync(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, open };
}

async function waitListening(forwarder: Component, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (forwarder.tail(5).includes('forwarder: listening')) return;
    const code = forwarder.exitCode();
    if (code !== undefined) throw new Error(`api-bridge: forwarder exited with ${code}: ${forwarder.tail(5)}`);
    await sleep(50);
  }
  throw new Error(`api-bridge: forwarder not listening after ${timeoutMs} ms: ${forwarder.tail(5)}`);
}

/** Starts both halves and resolves once the in-namespace listener is up. */
export async function startApiBridge(opts: ApiBridgeOptions): Promise<ApiBridge> {
  const port = opts.port ?? BRIDGE_PORT;
  const socketPath = join(opts.dir, `api-${opts.netns}.sock`);
  let count = 0;
  const { server, open } = await listenUnix(socketPath, apiPort(opts.apiserver), () => count++);
  const forwarder = startComponent(opts.dir, `api-forwarder-${opts.netns}`, 'ip', [
    'netns',
    'exec',
    opts.netns,
    process.execPath,
    FORWARDER,
    socketPath,
    String(port),
  ]);
  const stop = async (): Promise<void> => {
    await forwarder.stop();
    for (const s of open) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(socketPath, { force: true });
  };
  try {
    await waitListening(forwarder, 10_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { server: `https://127.0.0.1:${port}`, socketPath, connections: () => count, stop };
}
