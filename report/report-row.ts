/**
 * One row of a report: a measurement's numbers with their rounds, the guards
 * that fired and the dataplane around it. Its own file so that the sweep
 * tables, built from rows, and the report, which holds a sweep, do not import
 * each other.
 */
import type { PathMtu } from '../gen/cnibench/v1/agent.js';
import type { RowCpu } from './cpu-cost.js';
import type { Guard } from './guards.js';
import type { Metric } from './metrics-model.js';
import type { NodePhaseSummary } from './phase-dataplane.js';

export interface ReportRow {
  id: string;
  measurement: string;
  path: string;
  tool: string;
  toolVersion: string;
  value: number | null;
  unit: string;
  status: string;
  error: string;
  details: Record<string, number | string | boolean>;
  /** New connections DNATed by KUBE-SEP-* rules on the client's node during the phase; null without samples. */
  dnatConnections: number | null;
  /**
   * Cilium's equivalent on the client's node: sockets whose connect() its
   * socket LB translated to a backend and that were released during the phase
   * (cilium_metrics reason LB_REVNAT_DELETE); null where Cilium was not read.
   */
  socketLbTranslated: number | null;
  /** Methodology guards that fired in any round (guards.ts), shown next to the number. */
  warnings: Guard[];
  /** Measured rounds that produced a result. */
  rounds: number;
  /** Every number of the row with its rounds and dispersion; metrics[0] is the headline `value`. */
  metrics: Metric[];
  /**
   * Set when a guard found that the number measures something else entirely
   * (connections refused and retried): `value` is then null and `metrics`
   * empty, so no renderer, comparison or sweep can show it as a measurement.
   */
  invalid?: { code: string; reason: string; counters: Record<string, number> };
  /** Dummy Services present when a sweep measured this row. */
  step?: number;
  /** Each node's dataplane over the phase, from the samples taken within it. */
  dataplane: NodePhaseSummary[];
  /** Net cores busy per side over the rounds (report/cpu-cost.ts); the per-unit figure is a metric. */
  cpu?: RowCpu;
  /** The path MTU toward the row's target, measured by the client's agent (agent/observe/pmtu.ts). */
  pathMtu?: PathMtu;
  /** Why the row has no CPU per unit of work (no baseline, a sample without kernel CPU, a restart). */
  cpuMissing?: string;
}
