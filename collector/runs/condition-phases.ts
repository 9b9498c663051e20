/**
 * Lays out a scenario's overhead conditions as phases after the baseline: per
 * condition every measurement once more without it (the group's adjacent
 * baseline), then (per step of a policy-count sweep) a phase that applies and
 * verifies it, every measurement under it, and a phase that reverts it and
 * verifies the revert. Measurements under a condition carry its group and
 * label, so the report puts each beside its baseline. Pure.
 */
import { type ConditionRequest, conditionLabel } from '../../core/conditions.js';
import type { ConditionsSpec } from './conditions-schema.js';
import type { ScenarioMeasurement } from './phases.js';
import { measurementLabel } from './scenario.js';

export type ConditionPhaseSpec = {
  kind: 'condition';
  name: string;
  action: 'apply' | 'revert';
  request: ConditionRequest;
  /** The condition's group: a policy-count sweep is one group, every other condition its own. */
  group: string;
};

export type ConditionMeasureSpec = {
  kind: 'measure';
  name: string;
  measurement: ScenarioMeasurement;
  /** `baseline`: measured without the condition right before its group is applied, the group's own baseline. */
  condition: { group: string; label: string; request: ConditionRequest; baseline?: true };
  step?: undefined;
};

/** The groups in the order they run, each with its requests (one per step). */
export function conditionGroups(c: ConditionsSpec | undefined): { group: string; requests: ConditionRequest[] }[] {
  if (!c) return [];
  const out: { group: string; requests: ConditionRequest[] }[] = [];
  if (c.networkPolicy)
    out.push({ group: 'networkPolicy', requests: [{ kind: 'networkPolicy', policies: c.networkPolicy.policies }] });
  if (c.policyCount)
    out.push({
      group: 'policyCount',
      requests: c.policyCount.steps.map((n): ConditionRequest => ({ kind: 'policyCount', policies: n })),
    });
  if (c.l7Policy) out.push({ group: 'l7Policy', requests: [{ kind: 'l7Policy', urlPath: c.l7Policy.urlPath }] });
  if (c.hubble) out.push({ group: 'hubble', requests: [{ kind: 'hubble' }] });
  if (c.encryption) out.push({ group: 'encryption', requests: [{ kind: 'encryption' }] });
  return out;
}

export function conditionPhases(
  c: ConditionsSpec | undefined,
  measurements: readonly ScenarioMeasurement[],
): (ConditionPhaseSpec | ConditionMeasureSpec)[] {
  return conditionGroups(c).flatMap(({ group, requests }) => {
    const last = requests[requests.length - 1] as ConditionRequest;
    const first = requests[0] as ConditionRequest;
    return [
      // The group's own baseline, measured minutes (not a run) before the group: drift of the machine between the
      // run's first baseline and a late condition is not put down to the condition.
      ...measurements.map(
        (m): ConditionMeasureSpec => ({
          kind: 'measure',
          name: `${measurementLabel(m)} [baseline before ${group}]`,
          measurement: m,
          condition: { group, label: `baseline before ${group}`, request: first, baseline: true },
        }),
      ),
      ...requests.flatMap((request): (ConditionPhaseSpec | ConditionMeasureSpec)[] => {
        const label = conditionLabel(request);
        return [
          { kind: 'condition', name: `apply ${label}`, action: 'apply', request, group },
          ...measurements.map(
            (m): ConditionMeasureSpec => ({
              kind: 'measure',
              name: `${measurementLabel(m)} [${label}]`,
              measurement: m,
              condition: { group, label, request },
            }),
          ),
        ];
      }),
      { kind: 'condition', name: `revert ${group}`, action: 'revert', request: last, group },
    ];
  });
}
