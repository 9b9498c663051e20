/**
 * Folds one round's probe results into ProbeOutcome messages: per type and
 * target, successes with their latency histogram (mergeable at the collector),
 * failures with the last reason, and for the Service probe who answered.
 */

import { LatencyHistogram } from '../../core/histogram.js';
import type { ProbeOutcome } from '../../gen/cnibench/v1/agent.js';
import type { ErrorReason, ProbeType } from './protocol.js';

interface Acc {
  type: ProbeType;
  target: string;
  ok: number;
  failed: number;
  reason: string;
  latency: LatencyHistogram;
  answeredBy: Set<string>;
}

export class RoundOutcomes {
  private readonly acc = new Map<string, Acc>();

  private get(type: ProbeType, target: string): Acc {
    const key = `${type}\u0000${target}`;
    let a = this.acc.get(key);
    if (!a) {
      a = { type, target, ok: 0, failed: 0, reason: '', latency: new LatencyHistogram(), answeredBy: new Set() };
      this.acc.set(key, a);
    }
    return a;
  }

  ok(type: ProbeType, target: string, us: number, answeredBy?: string): void {
    const a = this.get(type, target);
    a.ok++;
    a.latency.record(us);
    if (answeredBy) a.answeredBy.add(answeredBy);
  }

  fail(type: ProbeType, target: string, reason: ErrorReason): void {
    const a = this.get(type, target);
    a.failed++;
    a.reason = reason;
  }

  /** Targets with at least one failure this round, by target. */
  failingTargets(): Set<string> {
    return new Set([...this.acc.values()].filter((a) => a.failed > 0).map((a) => a.target));
  }

  list(): ProbeOutcome[] {
    return [...this.acc.values()]
      .sort((a, b) => a.target.localeCompare(b.target) || a.type.localeCompare(b.type))
      .map((a) => ({
        type: a.type,
        targetNode: a.target,
        ok: a.ok,
        failed: a.failed,
        errorReason: a.reason,
        latency: a.ok ? a.latency.toProto() : undefined,
        answeredBy: [...a.answeredBy].sort(),
      }));
  }
}
