/**
 * `kubectl port-forward` in-process: a listener on 127.0.0.1 (port 0) whose
 * every accepted connection becomes one port-forward stream through the
 * apiserver to the pod (POST .../pods/NAME/portforward upgraded to a
 * WebSocket by @kubernetes/client-node, which the apiserver relays to the
 * node's kubelet). The CLI's HTTP client then dials the local port.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { type KubeConfig, PortForward } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

export interface Tunnel {
  /** The local port on 127.0.0.1. */
  port: number;
  /** The first error a stream met (shown when a request through the tunnel fails). */
  lastError(): Error | undefined;
  close(): Promise<void>;
}

interface Closable {
  close(): void;
  on?(event: string, listener: (arg: Error) => void): void;
}

/** Opens the local end; streams are opened per connection, so an unreachable pod surfaces on the first request. */
export async function openTunnel(kc: KubeConfig, namespace: string, pod: string, podPort: number): Promise<Tunnel> {
  const forward = new PortForward(kc, true);
  const sockets = new Set<Socket>();
  const sockets2ws = new Map<Socket, Closable>();
  let last: Error | undefined;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      sockets2ws.get(socket)?.close();
      sockets2ws.delete(socket);
    });
    socket.on('error', () => socket.destroy());
    forward
      .portForward(namespace, pod, [podPort], socket, null, socket)
      .then((ws) => {
        const w = (typeof ws === 'function' ? ws() : ws) as unknown as Closable | null;
        if (!w) return;
        sockets2ws.set(socket, w);
        w.on?.('close', () => socket.end());
        w.on?.('error', (err: Error) => {
          last = err;
          socket.destroy();
        });
      })
      .catch((err: unknown) => {
        last = portForwardError(err, namespace, pod);
        socket.destroy();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    lastError: () => last,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        for (const w of sockets2ws.values()) w.close();
        server.close(() => resolve());
      }),
  };
}

/** A failed port-forward upgrade as a coded error; a 403 names the verb it needs. */
export function portForwardError(err: unknown, namespace: string, pod: string): CniBenchError {
  const text = String((err as Error)?.message ?? err);
  const status = /\b(40[13]|404|5\d\d)\b/.exec(text)?.[1];
  if (status === '403')
    return new CniBenchError(
      ErrorCodes.FORBIDDEN,
      `kubernetes: port-forward to pod ${namespace}/${pod} forbidden; needs RBAC 'get' and 'create' on pods/portforward in namespace '${namespace}' (a WebSocket upgrade is a GET, and the apiserver asks for both; or pass --collector URL)`,
      { cause: err, details: { status: 403, rbac: 'get, create pods/portforward' } },
    );
  return new CniBenchError(
    ErrorCodes.KUBERNETES,
    `kubernetes: port-forward to pod ${namespace}/${pod} failed (${text.slice(0, 200)})`,
    { cause: err, details: { namespace, pod, ...(status ? { status: Number(status) } : {}) } },
  );
}
