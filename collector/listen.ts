/**
 * Binds an assembled collector: its gRPC services on a server at
 * config.grpcListen and its REST API at config.httpHost:httpPort (port 0
 * picks one). Only this file listens; the collector's main, the lab and the
 * tests all come through startCollector.
 */

import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@grpc/grpc-js';
import type { Logger } from '../core/log.js';
import type { ServiceFrontend } from '../core/service-frontend.js';
import { type AssembledCollector, assembleCollector, type CollectorOptions } from './collector.js';
import type { CollectorConfig } from './config.js';
import { removeStaleSocket, unixSocketPath } from './stale-socket.js';

/** A bound collector: the assembled one's parts, where it listens, and a close that also closes the listeners. */
export interface Collector
  extends Pick<
    AssembledCollector,
    'api' | 'registry' | 'orchestrator' | 'store' | 'queue' | 'tracker' | 'monitor' | 'registryMetrics'
  > {
  /** Bound gRPC address (host:port or unix:path). */
  readonly grpcAddress: string;
  /** Bound REST base URL. */
  readonly httpUrl: string;
  /** Cancels active runs (with cleanup on the agents), then closes listeners and the store. */
  close(): Promise<void>;
}

function bindGrpc(server: Server, c: AssembledCollector, address: string): Promise<number> {
  return new Promise<number>((resolve, reject) =>
    server.bindAsync(address, c.transport.credentials, (err, p) => (err ? reject(err) : resolve(p))),
  );
}

function listenHttp(http: HttpServer, host: string, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => resolve((http.address() as AddressInfo).port));
  });
}

/** Binds an assembled collector's two listeners and starts it. */
export async function listenCollector(c: AssembledCollector, config: CollectorConfig, log: Logger): Promise<Collector> {
  const grpcServer = new Server({
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.http2.min_ping_interval_without_data_ms': 5000,
  });
  c.addToServer(grpcServer);
  const socket = unixSocketPath(config.grpcListen);
  if (socket && (await removeStaleSocket(socket)))
    log.warn('removed the socket a collector that did not stop cleanly left behind', { path: socket });
  const port = await bindGrpc(grpcServer, c, config.grpcListen);
  const grpcAddress = config.grpcListen.startsWith('unix:')
    ? config.grpcListen
    : `${config.grpcListen.replace(/:\d+$/, '')}:${port}`;
  const http = c.createHttpServer();
  const httpPort = await listenHttp(http, config.httpHost, config.httpPort);
  c.start();
  const scheme = c.restTls ? 'https' : 'http';
  log.info('collector listening', {
    grpc: grpcAddress,
    grpcTls: c.transport.mode,
    http: `${scheme}://${config.httpHost}:${httpPort}`,
    restAuth: c.restAuth ? 'bearer' : 'none',
    agentIdentity: c.agentIdentity ? 'required' : 'open',
  });
  return {
    api: c.api,
    registry: c.registry,
    orchestrator: c.orchestrator,
    store: c.store,
    queue: c.queue,
    tracker: c.tracker,
    monitor: c.monitor,
    grpcAddress,
    httpUrl: `${scheme}://${config.httpHost === '0.0.0.0' ? '127.0.0.1' : config.httpHost}:${httpPort}`,
    registryMetrics: () => c.registryMetrics(),
    async close() {
      await c.close();
      // Agent sessions are long-lived streams: no run needs them any more, so cut them.
      grpcServer.forceShutdown();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      c.queue.close();
      c.store.close();
    },
  };
}

/** Assembles a collector and binds it: what the collector's main, the lab and tests (with port 0) run. */
export async function startCollector(
  config: CollectorConfig,
  log: Logger,
  services?: ServiceFrontend,
  options: CollectorOptions = {},
): Promise<Collector> {
  return listenCollector(assembleCollector(config, log, services, options), config, log);
}
