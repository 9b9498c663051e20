/**
 * What one probe round does and when, as pure functions of the plan and a
 * random source: the probe tasks (every type for every peer not paused, plus
 * one request through the probe Service), their start offsets spread over the
 * first part of the interval (so a round is a trickle, not a burst, and at most
 * one probe is usually in flight), and the jittered delay to the next round.
 */
import type { MonitorPlan } from '../../gen/cnibench/v1/agent.js';
import type { ProbeType } from './protocol.js';

export interface ProbeTask {
  type: ProbeType;
  /** The peer's node name; '' for the Service probe (any node may answer). */
  target: string;
  host: string;
  port: number;
}

/** Share of the interval over which a round's probe starts are spread. */
export const SPREAD_SHARE = 0.4;

export function roundTasks(plan: MonitorPlan | undefined): ProbeTask[] {
  if (!plan || plan.paused) return [];
  const tasks: ProbeTask[] = [];
  for (const p of plan.peers) {
    if (p.paused || !p.podIp || !p.probePort) continue;
    tasks.push({ type: 'tcp-connect', target: p.nodeName, host: p.podIp, port: p.probePort });
    tasks.push({ type: 'tcp-rr', target: p.nodeName, host: p.podIp, port: p.probePort });
    if (p.hostIp && p.hostProbePort) {
      tasks.push({ type: 'host-tcp-connect', target: p.nodeName, host: p.hostIp, port: p.hostProbePort });
      tasks.push({ type: 'host-tcp-rr', target: p.nodeName, host: p.hostIp, port: p.hostProbePort });
    }
  }
  if (plan.service?.ip && plan.service.port && !plan.servicePaused)
    tasks.push({ type: 'http-service', target: '', host: plan.service.ip, port: plan.service.port });
  return tasks;
}

/** Fisher-Yates with an injected random source. */
export function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Start offsets for `n` probes: one per equal slot of `spreadMs`, at a random point inside its slot. */
export function spreadOffsets(n: number, spreadMs: number, random: () => number): number[] {
  const slot = n > 0 ? spreadMs / n : 0;
  return Array.from({ length: n }, (_, i) => Math.floor(i * slot + random() * slot));
}

/** The delay before the next round: the interval moved by up to ±jitter of itself. */
export function nextRoundDelay(intervalMs: number, jitter: number, random: () => number): number {
  return Math.max(1, Math.round(intervalMs * (1 + jitter * (2 * random() - 1))));
}

/** Key of a kept connection (one per peer and network: pod or host). */
export function connectionKey(t: Pick<ProbeTask, 'target' | 'host' | 'port'>): string {
  return `${t.target}@${t.host}:${t.port}`;
}
