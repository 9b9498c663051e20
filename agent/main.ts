#!/usr/bin/env node
/**
 * cni-bench-agent: wires config, tool discovery, the job runner and the
 * collector link together. It binds nothing but the optional health port.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism, release } from 'node:os';
import { createLogger } from '../core/log.js';
import { stopAllChildren } from '../core/process.js';
import { requireSupportedNode, VERSION } from '../core/version.js';
import { loadAgentConfig, monitorTimeoutMs } from './config.js';
import { detectDataplane } from './dataplane.js';
import { createHealthServer } from './health.js';
import { JobRunner } from './jobs/job-runner.js';
import { CollectorLink } from './link.js';
import { linkCredentials } from './link-credentials.js';
import { AgentMetrics } from './monitor/metrics.js';
import { Monitor } from './monitor/monitor.js';
import { Outbox } from './outbox.js';
import { DataplaneSampler } from './samplers/dataplane-sampler.js';
import { discoverTools } from './tools/discover.js';

async function main(): Promise<void> {
  if (process.argv[2] === '--version') {
    process.stdout.write(`cni-bench-agent ${VERSION} (node ${process.version})\n`);
    return;
  }
  const config = loadAgentConfig(process.argv.slice(2), process.env);
  const log = createLogger({ component: 'agent', node: config.nodeName });
  const transport = linkCredentials(config);
  const instanceId = randomUUID();
  const tools = await discoverTools(log);
  const versions = new Map(tools.map((t) => [t.name, t.version]));
  const outbox = new Outbox(config.outboxLimit);
  const sampler = new DataplaneSampler({ hostNetns: config.hostNetns, processNames: config.processNames });
  const jobs = new JobRunner({ outbox, log, toolVersion: (t) => versions.get(t), sampler, hostNetns: config.hostNetns, cpus: availableParallelism() });
  const stop = new AbortController();
  const metrics = new AgentMetrics(config.nodeName);
  const monitor = config.monitor
    ? new Monitor(
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
        // A report is current state: pushed only while the link is up (the collector ignores one older than what it has).
        { metrics, log, report: (value) => void (link.connected && outbox.push({ $case: 'monitorReport', value })), busy: () => jobs.running > 0 },
      )
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
    }),
  });
  const health = config.healthPort
    ? createHealthServer({
        connected: () => link.connected,
        runningJobs: () => jobs.running,
        outboxPending: () => outbox.size,
        outboxDropped: () => outbox.dropped,
        metrics: () => metrics.text(),
      }).listen(config.healthPort)
    : undefined;
  const shutdown = (signal: string): void => {
    log.info('stopping', { signal });
    jobs.cancelAll();
    stop.abort();
    health?.close();
    void stopAllChildren().finally(() => process.exit(0));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  log.info('starting', { collector: config.collector, tls: transport.mode, tools: tools.map((t) => `${t.name}@${t.version}`), monitor: capability ?? false });
  await Promise.all([link.run(stop.signal), monitor?.run(stop.signal)]);
}

requireSupportedNode('cni-bench-agent');
main().catch((err: unknown) => {
  process.stderr.write(`cni-bench-agent: ${(err as Error).message}\n`);
  process.exit(2);
});
