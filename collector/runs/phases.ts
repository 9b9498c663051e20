/**
 * Lays a scenario out as the phases a run executes, in order. A plain run has
 * one phase per measurement; a Service scale sweep has, per step, a phase that
 * programs the dummy Services and waits for every node's dataplane to show
 * them, followed by every measurement at that step. Pure.
 */
import { type ConditionMeasureSpec, type ConditionPhaseSpec, conditionPhases } from './condition-phases.js';
import { measurementLabel, type Scenario } from './scenario.js';

export type ScenarioMeasurement = Scenario['measurements'][number];

export type PhaseSpec =
  | { kind: 'measure'; name: string; measurement: ScenarioMeasurement; step?: number; condition?: undefined }
  | ConditionMeasureSpec
  | ConditionPhaseSpec
  | { kind: 'scale'; name: string; services: number; endpointsPerService: number; syncTimeoutMs: number };

function services(n: number): string {
  return `${n.toLocaleString('en-US')} Service${n === 1 ? '' : 's'}`;
}

/** `measurements` default to the scenario's; the orchestrator passes the plan's (defaults the nodes cannot run are skipped). */
export function phasesOf(s: Scenario, measurements: readonly ScenarioMeasurement[] = s.measurements): PhaseSpec[] {
  const sweep = s.serviceScale;
  if (!sweep)
    return [
      ...measurements.map((m): PhaseSpec => ({ kind: 'measure', name: measurementLabel(m), measurement: m })),
      ...conditionPhases(s.conditions, measurements),
    ];
  return sweep.steps.flatMap((step): PhaseSpec[] => [
    {
      kind: 'scale',
      name: `program ${services(step)}`,
      services: step,
      endpointsPerService: sweep.endpointsPerService,
      syncTimeoutMs: sweep.syncTimeoutSeconds * 1000,
    },
    ...measurements.map(
      (m): PhaseSpec => ({ kind: 'measure', name: `${measurementLabel(m)} @ ${services(step)}`, measurement: m, step }),
    ),
  ]);
}
