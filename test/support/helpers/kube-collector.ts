/**
 * The real collector process in Kubernetes mode against a lab's apiserver, as
 * the cluster suites run it (harness/collector-process.ts's
 * startLabKubernetesCollector), with every lab agent started and connected
 * before it returns; and the run's condition steps and rows from its report.
 */
import type { Lab } from '../../../lab/lab.js';
import { startLabKubernetesCollector } from '../harness/collector-process.js';
import { getJson, type Proc } from './procs.js';
import { agentsConnected } from './rest-runs.js';

export interface KubeCollector {
  proc: Proc;
  url: string;
}

export async function startKubeCollector(
  lab: Lab,
  o: { kubeconfig: string; namespace: string; sweepNamespace: string; env?: NodeJS.ProcessEnv },
): Promise<KubeCollector> {
  const started = await startLabKubernetesCollector(o, lab, o.env);
  lab.startAgents(`unix:${lab.controlSocket}`);
  await agentsConnected(started.url, lab.agentCount, 60_000);
  return started;
}

/** One apply or revert of a condition, as the JSON report lists it. */
export interface ConditionStep {
  action: string;
  condition: string;
  group: string;
  status: string;
  how: string;
  enforcementMs?: number;
}

/** One measurement under a condition beside its baseline, as the JSON report lists it. */
export interface ConditionRow {
  measurement: string;
  condition: string;
  group: string;
  baseline: number | null;
  value: number | null;
  change: number | null;
  verdict?: string;
  error: string;
  unit: string;
}

/** The run's condition steps and rows from its JSON report, each also printed as a test diagnostic. */
export async function conditionsReport(
  url: string,
  runId: string,
  diagnostic: (line: string) => void,
): Promise<{ steps: ConditionStep[]; rows: ConditionRow[] }> {
  const report = (await getJson(`${url}/v1/runs/${runId}/report?format=json`)).body;
  const steps = (report.conditions?.steps ?? []) as ConditionStep[];
  const rows = (report.conditions?.rows ?? []) as ConditionRow[];
  for (const s of steps)
    diagnostic(`${s.action} ${s.condition}: ${s.status}; enforcement ${s.enforcementMs ?? '-'} ms; ${s.how}`);
  for (const r of rows)
    diagnostic(
      `${r.measurement} [${r.condition}]: baseline ${r.baseline?.toFixed(0)} ${r.unit}, under it ${r.value?.toFixed(0) ?? '-'}, change ${r.change === null ? '-' : `${(r.change * 100).toFixed(1)}%`}, ${r.verdict ?? r.error}`,
    );
  return { steps, rows };
}
