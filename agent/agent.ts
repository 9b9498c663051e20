/**
 * Assembles an agent from its parts: tool discovery, the job runner, the
 * dataplane sampler, monitoring when asked, and the collector link. It binds
 * nothing; the agent's main listens on the health port and handles signals.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism, release } from 'node:os';
import type { Logger } from '../core/log.js';
import { VERSION } from '../core/version.js';
import { type AgentConfig, monitorTimeoutMs } from './config.js';
import { detectDataplane } from './dataplane.js';
import { createHealthServer } from './health.js';
import { JobRunner } from './jobs/job-runner.js';
import { CollectorLink } from './link.js';
import { linkCredentials } from './link-credentials.js';
import { AgentMetrics } from './monitor/metrics.js';
import { Monitor, type MonitorDeps } from './monitor/monitor.js';
import { nodeFactsOnce } from './node-facts.js';
import { Outbox } from './outbox.js';
import { DataplaneSampler } from './samplers/dataplane-sampler.js';
import { discoverTools } from './tools/discover.js';

export interface Agent {
  /** The /healthz and /metrics server, not yet listening. */
  createHealthServer(): ReturnType<typeof createHealthServer>;
  /** Runs the collector link (and monitoring) until stop(). */
  run(): Promise<void>;
  /** Cancels running jobs and ends run(); child processes are the caller's to stop. */
  stop(): void;
}

function createMonitor(config: AgentConfig, deps: MonitorDeps): Monitor {
  return new Monitor(
    {
      node: config.nodeName,
      intervalMs: config.monitorIntervalS * 1000,
      jitter: config.monitorJitter,
      timeoutMs: monitorTimeoutMs(config),
      port: config.monitorPort,
      peers: config.monitorPeers,
      hostNetns: config.hostNetns,
      hostProbes: config.monitorHostProbes,
      bpfMapPrefixes: config.monitorBpfMaps,
      processNames: config.processNames,
    },
    deps,
  );
}

export async function assembleAgent(config: AgentConfig, log: Logger): Promise<Agent> {
  const transport = linkCredentials(config);
  const instanceId = randomUUID();
  // Read in a child while the rest starts; registration waits for it a little, never long.
  const nodeFacts = nodeFactsOnce(config.podIp, log);
  const tools = await discoverTools(log);
  const versions = new Map(tools.map((t) => [t.name, t.version]));
  const outbox = new Outbox(config.outboxLimit);
  const sampler = new DataplaneSampler({ hostNetns: config.hostNetns, processNames: config.processNames });
  const jobs = new JobRunner({
    outbox,
    log,
    toolVersion: (t) => versions.get(t),
    sampler,
    hostNetns: config.hostNetns,
    cpus: availableParallelism(),
    nodeName: config.nodeName,
  });
  const stop = new AbortController();
  const metrics = new AgentMetrics(config.nodeName);
  const monitor = config.monitor
    ? // A report is current state: pushed only while the link is up (the collector ignores one older than what it has).
      createMonitor(config, {
        metrics,
        log,
        report: (value) => void (link.connected && outbox.push({ $case: 'monitorReport', value })),
        busy: () => jobs.running > 0,
      })
    : undefined;
  const capability = await monitor?.start(stop.signal);
  const link = new CollectorLink({
    address: config.collector,
    transport,
    outbox,
    log,
    backoffBaseMs: config.backoffBaseMs,
    backoffMaxMs: config.backoffMaxMs,
    onJob: (job) => jobs.handle(job),
    onMonitorPlan: (plan) => monitor?.setPlan(plan),
    activeRunIds: () => jobs.activeRunIds(),
    runningJobs: () => jobs.running,
    registration: async () => ({
      nodeName: config.nodeName,
      podName: config.podName,
      podIp: config.podIp,
      hostIp: config.hostIp,
      kernel: release(),
      agentVersion: VERSION,
      instanceId,
      tools,
      dataplane: await detectDataplane(config.hostNetns, sampler),
      labels: { ...config.labels },
      agentName: config.agentName ?? config.nodeName,
      cpus: availableParallelism(),
      monitor: capability,
      nodeFacts: await nodeFacts(),
    }),
  });
  log.info('starting', {
    collector: config.collector,
    tls: transport.mode,
    tools: tools.map((t) => `${t.name}@${t.version}`),
    monitor: capability ?? false,
  });
  return {
    createHealthServer: () =>
      createHealthServer({
        connected: () => link.connected,
        runningJobs: () => jobs.running,
        outboxPending: () => outbox.size,
        outboxDropped: () => outbox.dropped,
        metrics: () => metrics.text(),
      }),
    run: async () => void (await Promise.all([link.run(stop.signal), monitor?.run(stop.signal)])),
    stop() {
      jobs.cancelAll();
      stop.abort();
    },
  };
}
