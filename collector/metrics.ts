/**
 * Every Prometheus metric the collector exports, declared once with help text.
 * Callers use the narrow helpers below and never handle label arrays.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class CollectorMetrics {
  readonly registry = new Registry();
  private readonly agentsConnected = new Gauge({ name: 'cni_bench_agents_connected', help: 'Agents with an open session stream', registers: [this.registry] });
  private readonly agentsRegistered = new Gauge({ name: 'cni_bench_agents_registered', help: 'Agents known to the collector (connected or not)', registers: [this.registry] });
  private readonly agentMessages = new Counter({
    name: 'cni_bench_agent_messages_total',
    help: 'Sequenced messages received from agents, by type and outcome (stored or duplicate)',
    labelNames: ['type', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly agentDropped = new Gauge({
    name: 'cni_bench_agent_outbox_dropped',
    help: 'Messages an agent dropped because its unacknowledged buffer overflowed (as last reported)',
    labelNames: ['agent'] as const,
    registers: [this.registry],
  });
  private readonly agentsLost = new Counter({ name: 'cni_bench_agents_lost_total', help: 'Agents declared lost after the liveness timeout', registers: [this.registry] });
  private readonly runs = new Counter({ name: 'cni_bench_runs_total', help: 'Runs that ended, by final state', labelNames: ['state'] as const, registers: [this.registry] });
  private readonly runsActive = new Gauge({ name: 'cni_bench_runs_active', help: 'Runs currently executing', registers: [this.registry] });
  private readonly runDuration = new Histogram({
    name: 'cni_bench_run_duration_seconds',
    help: 'Wall time of finished runs',
    buckets: [10, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [this.registry],
  });

  constructor(defaults = true) {
    if (defaults) collectDefaultMetrics({ register: this.registry, prefix: 'cni_bench_collector_' });
  }

  setAgents(connected: number, registered: number): void {
    this.agentsConnected.set(connected);
    this.agentsRegistered.set(registered);
  }

  agentMessage(type: string, duplicate: boolean): void {
    this.agentMessages.inc({ type, outcome: duplicate ? 'duplicate' : 'stored' });
  }

  agentOutboxDropped(agent: string, dropped: number): void {
    this.agentDropped.set({ agent }, dropped);
  }

  agentLost(): void {
    this.agentsLost.inc();
  }

  runStarted(): void {
    this.runsActive.inc();
  }

  runEnded(state: string, seconds: number): void {
    this.runsActive.dec();
    this.runs.inc({ state });
    this.runDuration.observe(seconds);
  }
}
