/**
 * The real collector process against the harness apiserver, as the chart's
 * collector ServiceAccount (a kubeconfig from installCollectorIdentity), with
 * real agents on this host connected to it. Shared by the suites that drive the
 * collector from outside, through its REST API.
 */
import { startLoopbackAgent } from '../helpers/loopback.js';
import { COLLECTOR_MAIN, freePort, getJson, type Proc, startNode, waitFor } from '../helpers/procs.js';
import { agentsConnected } from '../helpers/rest-runs.js';

export interface CollectorProcessOptions {
  kubeconfig: string;
  namespace: string;
  sweepNamespace: string;
  /** Node names of the agents to start (default node-a, node-b). */
  agents?: string[];
}

/**
 * The collector process (in-memory store, REST on a free loopback port) acting as the ServiceAccount of
 * `o.kubeconfig`, its agents' gRPC on `grpcListen`, plus `env`; resolves once it answers /healthz.
 */
export async function startKubernetesCollector(
  o: Omit<CollectorProcessOptions, 'agents'>,
  grpcListen: string,
  env: NodeJS.ProcessEnv = {},
  healthyWithinMs = 30_000,
): Promise<{ proc: Proc; url: string }> {
  const httpPort = await freePort();
  const proc = startNode(COLLECTOR_MAIN, [], {
    CNI_BENCH_KUBERNETES: 'kubeconfig',
    CNI_BENCH_KUBECONFIG: o.kubeconfig,
    CNI_BENCH_NAMESPACE: o.namespace,
    CNI_BENCH_SWEEP_NAMESPACE: o.sweepNamespace,
    CNI_BENCH_GRPC_LISTEN: grpcListen,
    CNI_BENCH_HTTP_HOST: '127.0.0.1',
    CNI_BENCH_HTTP_PORT: String(httpPort),
    CNI_BENCH_DB: ':memory:',
    ...env,
  });
  const url = `http://127.0.0.1:${httpPort}`;
  await waitFor('the collector', async () => (await getJson(`${url}/healthz`)).status === 200, healthyWithinMs).catch(
    (err: Error) => {
      // Not handed back, so not left running either.
      proc.child.kill('SIGKILL');
      throw new Error(`${err.message}\n${proc.output()}`);
    },
  );
  return { proc, url };
}

/**
 * The collector process as in startKubernetesCollector for a lab's agents: their gRPC on the lab's control
 * socket, an agent lost after 30 s, info-level logs (which the tests read), plus `env`.
 */
export function startLabKubernetesCollector(
  o: Omit<CollectorProcessOptions, 'agents'>,
  lab: { controlSocket: string },
  env: NodeJS.ProcessEnv = {},
  healthyWithinMs = 30_000,
): Promise<{ proc: Proc; url: string }> {
  return startKubernetesCollector(
    o,
    `unix:${lab.controlSocket}`,
    { CNI_BENCH_LIVENESS_TIMEOUT_MS: '30000', CNI_BENCH_LOG_LEVEL: 'info', ...env },
    healthyWithinMs,
  );
}

/** Starts the collector (in-memory store) and the agents; resolves once every agent is connected. */
export async function startCollectorProcess(
  o: CollectorProcessOptions,
): Promise<{ collector: Proc; agents: Proc[]; url: string }> {
  const grpc = `127.0.0.1:${await freePort()}`;
  const { proc: collector, url } = await startKubernetesCollector(o, grpc);
  const names = o.agents ?? ['node-a', 'node-b'];
  const agents = await Promise.all(names.map(async (n) => startLoopbackAgent(grpc, n, await freePort())));
  await agentsConnected(url, names.length, 20_000);
  return { collector, agents, url };
}
