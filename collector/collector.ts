/**
 * Assembles a collector from its parts and binds its two listeners. Used by the
 * collector's main, by the lab, and by tests (with port 0), so every caller runs
 * exactly the same wiring.
 */
import { Server } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import type { Logger } from '../core/log.js';
import { AgentRegistry } from './agents/registry.js';
import type { CollectorConfig } from './config.js';
import { AgentServiceImpl } from './grpc/agent-service.js';
import { MonitorServiceImpl } from './grpc/monitor-service.js';
import { RunServiceImpl } from './grpc/run-service.js';
import { serverCredentials } from './grpc/server-credentials.js';
import { CollectorMetrics } from './metrics.js';
import { MonitorCoordinator, type MonitorCoordinatorOptions } from './monitor/coordinator.js';
import { bearerAuth, loadRestToken } from './rest/auth.js';
import { createRestServer } from './rest/server.js';
import { JobTracker } from './runs/job-tracker.js';
import { Orchestrator } from './runs/orchestrator.js';
import { RunsApi } from './runs/runs-api.js';
import type { ServiceFrontend } from '../core/service-frontend.js';
import { Store } from './store/store.js';

export interface Collector {
  readonly api: RunsApi;
  readonly registry: AgentRegistry;
  readonly orchestrator: Orchestrator;
  readonly store: Store;
  readonly monitor: MonitorCoordinator;
  /** Bound gRPC address (host:port or unix:path). */
  readonly grpcAddress: string;
  /** Bound REST base URL. */
  readonly httpUrl: string;
  /** Cancels active runs (with cleanup on the agents), then closes listeners and the store. */
  close(): Promise<void>;
}

export interface CollectorOptions {
  /** Continuous monitoring: probe Service, window, node status (see collector/monitor/coordinator.ts). */
  monitor?: MonitorCoordinatorOptions;
}

export async function startCollector(config: CollectorConfig, log: Logger, services?: ServiceFrontend, options: CollectorOptions = {}): Promise<Collector> {
  // Secrets first: a bad mount fails start-up before anything is opened or bound.
  const transport = serverCredentials(config);
  const auth = config.restTokenFile ? bearerAuth(loadRestToken(config.restTokenFile)) : undefined;
  const store = new Store(config.dbPath);
  const interrupted = store.interruptUnfinished('collector restarted while the run was in progress');
  if (interrupted) log.warn('marked unfinished runs as interrupted', { count: interrupted });
  const metrics = new CollectorMetrics();
  const registry = new AgentRegistry(metrics, config.livenessTimeoutMs);
  const tracker = new JobTracker(store);
  const orchestrator = new Orchestrator({ store, registry, tracker, metrics, log, ...(services ? { services } : {}) });
  const api = new RunsApi(store, orchestrator, registry, services);
  const activeRun = (): { id: string; cluster: unknown } | undefined => {
    const id = orchestrator.activeRunId();
    return id === undefined ? undefined : { id, cluster: store.getRun(id)?.cluster };
  };
  const monitor = new MonitorCoordinator({ registry, activeRun, log, ...(services ? { services } : {}) }, options.monitor);
  metrics.setMonitorSource(() => monitor.snapshot());

  const grpcServer = new Server({ 'grpc.keepalive_permit_without_calls': 1, 'grpc.http2.min_ping_interval_without_data_ms': 5000 });
  const health = new HealthImplementation({ '': 'NOT_SERVING', 'cnibench.v1.AgentService': 'NOT_SERVING', 'cnibench.v1.RunService': 'NOT_SERVING', 'cnibench.v1.MonitorService': 'NOT_SERVING' });
  health.addToServer(grpcServer);
  new AgentServiceImpl({ registry, tracker, metrics, log, heartbeatIntervalMs: config.heartbeatIntervalMs, isRunActive: (id) => orchestrator.isActive(id), onMonitorReport: (id, r) => monitor.onReport(id, r) }).addToServer(grpcServer);
  new RunServiceImpl(api).addToServer(grpcServer);
  new MonitorServiceImpl(() => monitor.snapshot()).addToServer(grpcServer);
  const port = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync(config.grpcListen, transport.credentials, (err, p) => (err ? reject(err) : resolve(p))),
  );
  const grpcAddress = config.grpcListen.startsWith('unix:') ? config.grpcListen : `${config.grpcListen.replace(/:\d+$/, '')}:${port}`;

  let ready = false;
  const http: HttpServer = createRestServer(api, metrics, () => ready, auth, () => monitor.snapshot());
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(config.httpPort, config.httpHost, () => resolve());
  });
  const httpPort = (http.address() as AddressInfo).port;
  const sweeper = setInterval(() => registry.sweep(), Math.max(250, Math.floor(config.livenessTimeoutMs / 4)));
  sweeper.unref();
  monitor.start();
  for (const s of ['', 'cnibench.v1.AgentService', 'cnibench.v1.RunService', 'cnibench.v1.MonitorService']) health.setStatus(s, 'SERVING');
  ready = true;
  log.info('collector listening', { grpc: grpcAddress, grpcTls: transport.mode, http: `http://${config.httpHost}:${httpPort}`, restAuth: auth ? 'bearer' : 'none' });

  return {
    api,
    registry,
    orchestrator,
    store,
    monitor,
    grpcAddress,
    httpUrl: `http://${config.httpHost === '0.0.0.0' ? '127.0.0.1' : config.httpHost}:${httpPort}`,
    async close() {
      ready = false;
      clearInterval(sweeper);
      await orchestrator.shutdown();
      await monitor.close();
      // Agent sessions are long-lived streams: no run needs them any more, so cut them.
      grpcServer.forceShutdown();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      store.close();
    },
  };
}
