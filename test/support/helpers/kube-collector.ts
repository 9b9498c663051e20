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
