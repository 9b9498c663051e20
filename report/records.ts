/**
 * What a run leaves in the store: the run, its phases, raw results and
 * dataplane samples. The collector's store writes these and a report is built
 * from them, so the records belong to the report and the store imports them.
 */
import type { DataplaneSample, JobResult } from '../gen/cnibench/v1/agent.js';

export type RunState = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'interrupted';
export const TERMINAL_STATES: ReadonlySet<RunState> = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

export interface RunRecord {
  id: string;
  state: RunState;
  reason: string;
  createdMs: number;
  startedMs: number;
  endedMs: number;
  scenario: unknown;
  /** What the collector knew of the cluster and its agents when the run started. */
  cluster: unknown;
}

export interface PhaseRecord {
  runId: string;
  index: number;
  name: string;
  state: 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'interrupted';
  error: string;
  startedMs: number;
  endedMs: number;
  /** The measurement spec and the resolved endpoints (nodes, target address). */
  detail: unknown;
}

export interface ResultRecord {
  runId: string;
  phaseIndex: number | null;
  agentId: string;
  warmup: boolean;
  result: JobResult;
}

export interface SampleRecord {
  runId: string;
  agentId: string;
  sample: DataplaneSample;
}
