/**
 * Runs a scenario's condition phases: applies a condition through the
 * frontend's ConditionDriver (which verifies it in the dataplane), remembers
 * which groups are in place so cleanup reverts them on failure, cancel and
 * SIGTERM, and refuses to measure under a condition that was not verified.
 */
import type { ConditionDriver, ConditionEvidence, ConditionProbes, ConditionTarget } from '../../core/conditions.js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { ConditionMeasureSpec, ConditionPhaseSpec } from './condition-phases.js';
import type { RunPlan } from './plan.js';

export class ConditionRunner {
  /** Groups applied (possibly partly) and not yet reverted, with their last request. */
  private readonly applied = new Map<string, ConditionPhaseSpec['request']>();
  /** Groups whose current step could not be verified, with the reason. */
  private readonly failed = new Map<string, string>();

  constructor(
    private readonly runId: string,
    private readonly plan: RunPlan,
    private readonly driver: ConditionDriver | undefined,
    private readonly log: Logger,
    /** Verification through the run's agents (condition-probes.ts), for drivers that cannot probe themselves. */
    private readonly probes?: () => ConditionProbes,
  ) {}

  private get target(): ConditionTarget {
    const ips = [this.plan.client.info.podIp, this.plan.peer?.info.podIp].filter((ip): ip is string => !!ip);
    const probes = this.probes?.();
    return {
      runId: this.runId,
      serverPodIp: this.plan.server.info.podIp,
      clientPodIps: [...new Set(ips)],
      ...(probes ? { probes } : {}),
    };
  }

  /** Applies or reverts; resolves the evidence for the phase record, throws the reason it could not. */
  async run(spec: ConditionPhaseSpec, signal: AbortSignal): Promise<ConditionEvidence> {
    if (spec.action === 'revert') {
      this.failed.delete(spec.group);
      if (!this.applied.has(spec.group)) return { how: 'nothing was applied', facts: {} };
      this.applied.delete(spec.group);
      return this.need().revert(spec.request, this.target);
    }
    this.failed.delete(spec.group);
    try {
      const driver = this.need();
      this.applied.set(spec.group, spec.request);
      return await driver.apply(spec.request, this.target, signal);
    } catch (err) {
      this.failed.set(spec.group, (err as Error).message);
      throw err;
    }
  }

  /** Throws when the measurement's condition is not in force (its apply failed), so no value is taken. */
  check(spec: ConditionMeasureSpec): void {
    const why = this.failed.get(spec.condition.group);
    if (why !== undefined)
      throw new CniBenchError(ErrorCodes.LAB, `condition '${spec.condition.label}' not verified: ${why}`, {
        details: { condition: spec.condition.label },
      });
  }

  /** Reverts every group still in place. Never throws. */
  async cleanup(): Promise<void> {
    for (const [group, request] of [...this.applied]) {
      this.applied.delete(group);
      await this.driver
        ?.revert(request, this.target)
        .catch((err: Error) => this.log.warn('condition revert failed', { group, error: err.message }));
    }
  }

  private need(): ConditionDriver {
    if (!this.driver)
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        'conditions: this collector cannot put conditions in place (no condition driver: a lab, or a cluster collector with the conditions chart values)',
        { details: { field: 'conditions' } },
      );
    return this.driver;
  }
}
