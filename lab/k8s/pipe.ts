/**
 * One byte pipe for the control plane's paths across namespaces (the lab's and
 * the test harness's): a net.Server whose every connection is piped, untouched,
 * to a fresh upstream socket (TLS stays end to end). `open` holds the live
 * sockets so a caller can destroy them on stop.
 */
import { createServer, type Server, type Socket } from 'node:net';

export interface PipeServer {
  server: Server;
  open: Set<Socket>;
}

/** A server (not yet listening) piping each connection to `upstream()`; `onConnection` counts them if given. */
export function pipeServer(upstream: () => Socket, onConnection?: () => void): PipeServer {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    onConnection?.();
    const up = upstream();
    open.add(client).add(up);
    const close = (): void => {
      client.destroy();
      up.destroy();
      open.delete(client);
      open.delete(up);
    };
    client.on('error', close).on('close', close);
    up.on('error', close).on('close', close);
    client.pipe(up).pipe(client);
  });
  return { server, open };
}

/** Where a forwarder listens or connects: a unix socket path, or host:port over TCP. */
export type PipeAddress = { path: string } | { host: string; port: number };

/** Pure: a unix socket path (it contains '/') or host:port; undefined when it is neither. */
export function parsePipeAddress(text: string | undefined): PipeAddress | undefined {
  if (!text) return undefined;
  if (text.includes('/')) return { path: text };
  const at = text.lastIndexOf(':');
  const host = text.slice(0, at);
  const port = Number(text.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65_535) return undefined;
  return { host, port };
}

export function formatPipeAddress(a: PipeAddress): string {
  return 'path' in a ? a.path : `${a.host}:${a.port}`;
}
