/**
 * Assembles a collector from its parts without binding anything: like
 * grpc-health-check's services, its gRPC services are added to a server the
 * caller owns, and its REST API comes as an HTTP server the caller listens on
 * (collector/listen.ts does both for the collector's main, the lab and tests,
 * so every caller runs exactly the same wiring).
 */

import type { Server as HttpServer } from 'node:http';
import type { Server } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from '../core/log.js';
import type { ServiceFrontend } from '../core/service-frontend.js';
import { AgentRegistry } from './agents/registry.js';
import { loadAgentKey } from './auth/agent-key.js';
import { Authenticator, type TokenReviewer } from './auth/principal.js';
import { type CollectorConfig, readConfigFile } from './config.js';
import { AgentServiceImpl } from './grpc/agent-service.js';
import { MonitorServiceImpl } from './grpc/monitor-service.js';
import { addReflection } from './grpc/reflection.js';
import { RunServiceImpl } from './grpc/run-service.js';
import { type ServerTransport, serverCredentials } from './grpc/server-credentials.js';
import { CollectorMetrics } from './metrics.js';
import { MonitorCoordinator, type MonitorCoordinatorOptions } from './monitor/coordinator.js';
import { loadRestToken, operatorAuth } from './rest/auth.js';
import { createRestServer } from './rest/server.js';
import { JobTracker } from './runs/job-tracker.js';
import { Orchestrator } from './runs/orchestrator.js';
import { RunsApi } from './runs/runs-api.js';
import { Store } from './store/store.js';
import { WriteQueue } from './store/write-queue.js';

export interface CollectorOptions {
  /** Continuous monitoring: probe Service, window, node status (see collector/monitor/coordinator.ts). */
  monitor?: MonitorCoordinatorOptions;
  /** Verifies agents' ServiceAccount tokens (main builds it from the TokenReview API when agentTokenReview is on). */
  tokenReview?: TokenReviewer;
  /** Nodes a run may load when its scenario names none (serve.ts: the node watch's schedulable workers). */
  canLoad?: (nodeName: string) => boolean;
}

/** A collector whose parts exist and run, with nothing bound yet. */
export interface AssembledCollector {
  readonly api: RunsApi;
  readonly registry: AgentRegistry;
  readonly orchestrator: Orchestrator;
  readonly store: Store;
  /** Agents' results and samples on their way to the store (batched transactions). */
  readonly queue: WriteQueue;
  /** Which agent owns which job of which run (what the orchestrator expects back). */
  readonly tracker: JobTracker;
  readonly monitor: MonitorCoordinator;
  /** gRPC server credentials, read (with the REST token) before anything else. */
  readonly transport: ServerTransport;
  readonly restAuth: boolean;
  /** Whether agents must prove their node (node token, agent certificate or ServiceAccount token). */
  readonly agentIdentity: boolean;
  /** REST is served over TLS. */
  readonly restTls: boolean;
  /** The Prometheus exposition, as /metrics serves it. */
  registryMetrics(): Promise<string>;
  /** Adds the health service and the collector's gRPC services to a server the caller binds. */
  addToServer(server: Server): void;
  /** The REST API and /metrics, answering 503 on /readyz until start(). */
  createHttpServer(): HttpServer;
  /** Once bound: sweeps lost agents, starts monitoring, and reports SERVING. */
  start(): void;
  /** Cancels active runs (with cleanup on the agents) and closes the store; the caller closes its servers. */
  close(): Promise<void>;
}

const GRPC_SERVICES = ['', 'cnibench.v1.AgentService', 'cnibench.v1.RunService', 'cnibench.v1.MonitorService'];

export function assembleCollector(
  config: CollectorConfig,
  log: Logger,
  services?: ServiceFrontend,
  options: CollectorOptions = {},
): AssembledCollector {
  // Secrets first: a bad mount fails start-up before anything is opened or bound.
  const transport = serverCredentials(config);
  const operatorToken = config.restTokenFile ? loadRestToken(config.restTokenFile) : undefined;
  const agentKey = config.agentKeyFile ? loadAgentKey(config.agentKeyFile) : undefined;
  const restTls = config.restTls
    ? { cert: readConfigFile('tlsCertFile', config.tlsCertFile), key: readConfigFile('tlsKeyFile', config.tlsKeyFile) }
    : undefined;
  // One Authenticator decides for REST, RunService, MonitorService and AgentService alike.
  const authn = new Authenticator({
    ...(operatorToken ? { operatorToken } : {}),
    ...(agentKey ? { agentKey } : {}),
    mtls: transport.mode === 'mtls',
    ...(options.tokenReview ? { tokenReview: options.tokenReview } : {}),
  });
  const auth = operatorAuth(authn, operatorToken !== undefined);
  const store = new Store(config.dbPath);
  const interrupted = store.interruptUnfinished('collector restarted while the run was in progress');
  if (interrupted) log.warn('marked unfinished runs as interrupted', { count: interrupted });
  const metrics = new CollectorMetrics();
  const registry = new AgentRegistry(metrics, config.livenessTimeoutMs);
  const queue = new WriteQueue(store);
  // One line when writes start failing, then at most one every 10 s while they go on failing.
  let lastStoreLog = 0;
  let storeFailures = 0;
  store.onWriteError = (message) => {
    storeFailures++;
    if (Date.now() - lastStoreLog < 10_000) return;
    lastStoreLog = Date.now();
    log.error('store write failed', { error: message, failures: storeFailures });
  };
  const tracker = new JobTracker(queue);
  const orchestrator = new Orchestrator({
    store,
    registry,
    tracker,
    metrics,
    log,
    ...(services ? { services } : {}),
    ...(options.canLoad ? { canLoad: options.canLoad } : {}),
  });
  const api = new RunsApi(store, orchestrator, registry, services);
  const activeRun = (): { id: string; cluster: unknown } | undefined => {
    const id = orchestrator.activeRunId();
    return id === undefined ? undefined : { id, cluster: store.getRun(id)?.cluster };
  };
  const monitor = new MonitorCoordinator(
    { registry, activeRun, log, ...(services ? { services } : {}) },
    options.monitor,
  );
  metrics.setMonitorSource(() => monitor.snapshot());
  const health = new HealthImplementation(Object.fromEntries(GRPC_SERVICES.map((s) => [s, 'NOT_SERVING'])));
  let ready = false;
  let sweeper: NodeJS.Timeout | undefined;
  return {
    api,
    registry,
    orchestrator,
    store,
    queue,
    tracker,
    monitor,
    transport,
    restAuth: operatorToken !== undefined,
    agentIdentity: authn.agentsRequired,
    restTls: restTls !== undefined,
    registryMetrics: () => metrics.registry.metrics(),
    addToServer(server) {
      health.addToServer(server);
      new AgentServiceImpl({
        registry,
        tracker,
        queue,
        metrics,
        log,
        auth: authn,
        heartbeatIntervalMs: config.heartbeatIntervalMs,
        isRunActive: (id) => orchestrator.isActive(id),
        onMonitorReport: (id, r) => monitor.onReport(id, r),
      }).addToServer(server);
      new RunServiceImpl(api, authn).addToServer(server);
      new MonitorServiceImpl(() => monitor.snapshot(), authn).addToServer(server);
      // Schemas only, no data: open like the health service, so grpcurl can list and describe before it has a token.
      addReflection(server);
    },
    createHttpServer: () =>
      createRestServer(
        api,
        metrics,
        () => ready,
        auth,
        () => monitor.snapshot(),
        restTls,
      ),
    start() {
      const every = Math.max(250, Math.floor(config.livenessTimeoutMs / 4));
      let lastTick = Date.now();
      sweeper = setInterval(() => {
        const now = Date.now();
        // A tick this late means the collector stood still (SIGSTOP, CPU starvation): its own silence, not the agents'.
        if (now - lastTick > every + config.livenessTimeoutMs / 2) {
          log.warn('the collector stood still; agents get a fresh liveness timeout', { stalledMs: now - lastTick });
          registry.collectorStalled(now);
        }
        lastTick = now;
        registry.sweep(now);
      }, every);
      sweeper.unref();
      monitor.start();
      for (const s of GRPC_SERVICES) health.setStatus(s, 'SERVING');
      ready = true;
    },
    async close() {
      ready = false;
      clearInterval(sweeper);
      await orchestrator.shutdown();
      await monitor.close();
    },
  };
}
