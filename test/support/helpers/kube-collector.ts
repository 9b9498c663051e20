/**
 * The real collector process in Kubernetes mode against a lab's apiserver, as
 * the cluster suites run it: the chart's identity (a kubeconfig for its
 * ServiceAccount), the lab's control socket for the agents, an in-memory
 * store; started, healthy, and with every lab agent connected before it
 * returns. Plus the run calls those suites make over REST.
 */
import assert from 'node:assert/strict';
import type { Lab } from '../../../lab/lab.js';
import { COLLECTOR_MAIN, freePort, getJson, type Proc, startNode, waitFor } from './procs.js';

export interface KubeCollector {
  proc: Proc;
  url: string;
}

export async function startKubeCollector(
  lab: Lab,
  o: { kubeconfig: string; namespace: string; sweepNamespace: string; env?: NodeJS.ProcessEnv },
): Promise<KubeCollector> {
  const httpPort = await freePort();
  const url = `http://127.0.0.1:${httpPort}`;
  const proc = startNode(COLLECTOR_MAIN, [], {
    CNI_BENCH_KUBERNETES: 'kubeconfig',
    CNI_BENCH_KUBECONFIG: o.kubeconfig,
    CNI_BENCH_NAMESPACE: o.namespace,
    CNI_BENCH_SWEEP_NAMESPACE: o.sweepNamespace,
    CNI_BENCH_GRPC_LISTEN: `unix:${lab.controlSocket}`,
    CNI_BENCH_HTTP_HOST: '127.0.0.1',
    CNI_BENCH_HTTP_PORT: String(httpPort),
    CNI_BENCH_DB: ':memory:',
    CNI_BENCH_LIVENESS_TIMEOUT_MS: '30000',
    CNI_BENCH_LOG_LEVEL: 'info',
    ...o.env,
  });
  await waitFor(
    'the collector',
    async () => (await getJson(`${url}/healthz`).catch(() => ({ status: 0 }))).status === 200,
    30_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${proc.output()}`);
  });
  lab.startAgents(`unix:${lab.controlSocket}`);
  await waitFor(
    `${lab.agentCount} agents`,
    async () =>
      (await getJson(`${url}/v1/agents`)).body.agents.filter((a: { connected: boolean }) => a.connected).length ===
      lab.agentCount,
    60_000,
  );
  return { proc, url };
}

/** POST /v1/runs; the new run's id. */
export async function postRun(url: string, scenario: unknown): Promise<string> {
  const created = await getJson(`${url}/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(scenario),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id as string;
}

/** The run once it has ended (succeeded, failed or cancelled). */
export async function runEnded(url: string, runId: string, timeoutMs: number): Promise<any> {
  return waitFor(
    `run ${runId} to end`,
    async () => {
      const r = (await getJson(`${url}/v1/runs/${runId}`)).body;
      return ['succeeded', 'failed', 'cancelled'].includes(r.state) ? r : undefined;
    },
    timeoutMs,
    500,
  );
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
