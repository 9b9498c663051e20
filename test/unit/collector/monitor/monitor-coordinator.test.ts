/**
 * The collector's coordinator with a real registry: monitoring agents get a
 * plan when their session opens, a run pauses its nodes and the Service
 * probes (read from the active run's stored description), the end of the run
 * resumes them, and the probe Service follows the agents between runs only.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentRegistry } from '../../../../collector/agents/registry.js';
import { CollectorMetrics } from '../../../../collector/metrics.js';
import { MonitorCoordinator } from '../../../../collector/monitor/coordinator.js';
import type { NodeStatus } from '../../../../collector/monitor/plans.js';
import { createLogger } from '../../../../core/log.js';
import type { ServiceAddress, ServiceEndpoint, ServiceFrontend } from '../../../../core/service-frontend.js';
import type { CollectorMessage, MonitorPlan, RegisterRequest } from '../../../../gen/cnibench/v1/agent.js';

const req = (node: string, monitor = true): RegisterRequest => ({
  nodeName: node,
  podName: node,
  podIp: `198.18.${16 + Number(node.slice(1))}.10`,
  hostIp: `198.18.0.${1 + Number(node.slice(1))}`,
  kernel: '6.1',
  agentVersion: '0',
  instanceId: `${node}-1`,
  tools: [],
  dataplane: undefined,
  labels: {},
  agentName: '',
  cpus: 2,
  monitor: monitor ? { enabled: true, probePort: 8478, hostProbePort: 8478, peers: 2, intervalMs: 1000 } : undefined,
  nodeFacts: undefined,
});

/** Records what the coordinator asks of the service frontend. */
class RecordingFrontend implements ServiceFrontend {
  readonly description = 'recording';
  readonly calls: string[] = [];
  async expose(name: string, port: number, endpoints: ServiceEndpoint[]): Promise<ServiceAddress> {
    this.calls.push(`expose ${name}:${port} ${endpoints.map((e) => e.ip).join(',')}`);
    return { ip: '198.19.0.10', port };
  }
  async remove(name: string): Promise<void> {
    this.calls.push(`remove ${name}`);
  }
}

function setup(
  run: { current: { id: string; cluster: unknown } | undefined },
  nodeStatus?: () => ReadonlyMap<string, NodeStatus>,
) {
  const registry = new AgentRegistry(new CollectorMetrics(false), 10_000);
  const services = new RecordingFrontend();
  const plans = new Map<string, MonitorPlan[]>();
  const coordinator = new MonitorCoordinator(
    { registry, services, log: createLogger({}, 'error'), activeRun: () => run.current },
    { pollMs: 20, ...(nodeStatus ? { nodeStatus } : {}) },
  );
  coordinator.start();
  const connect = (node: string, monitor = true): void => {
    registry.register(req(node, monitor), true);
    registry.attach(node, (m: CollectorMessage) => {
      if (m.body?.$case === 'monitorPlan') plans.set(node, [...(plans.get(node) ?? []), m.body.value]);
    });
  };
  const latest = (node: string) => plans.get(node)?.at(-1);
  return { registry, services, plans, coordinator, connect, latest };
}

test('plans reach monitoring agents only; a run pauses its nodes and the Service probes, its end resumes them', async () => {
  const run: { current: { id: string; cluster: unknown } | undefined } = { current: undefined };
  const { services, coordinator, connect, latest, plans } = setup(run);
  for (const n of ['n0', 'n1', 'n2', 'n3']) connect(n);
  connect('n4', false);
  await sleep(300);
  assert.equal(plans.get('n4'), undefined, 'no plan for an agent without monitoring');
  for (const n of ['n0', 'n1', 'n2', 'n3']) {
    assert.equal(latest(n)?.peers.length, 2, n);
    assert.equal(latest(n)?.service?.ip, '198.19.0.10');
  }
  assert.deepEqual(services.calls, ['expose monitor-probe:8478 198.18.16.10,198.18.17.10,198.18.18.10,198.18.19.10']);
  run.current = { id: 'r1', cluster: { server: { node: 'n0' }, client: { node: 'n1' } } };
  await sleep(300);
  assert.equal(latest('n0')?.paused, true);
  assert.equal(latest('n1')?.paused, true);
  assert.equal(latest('n2')?.paused, false);
  for (const n of ['n0', 'n1', 'n2', 'n3']) assert.equal(latest(n)?.servicePaused, true);
  const marked = ['n2', 'n3'].flatMap(
    (n) =>
      latest(n)
        ?.peers.filter((p) => p.paused)
        .map((p) => p.nodeName) ?? [],
  );
  assert.ok(marked.every((m) => m === 'n0' || m === 'n1') && marked.length > 0, marked.join(','));
  connect('n5');
  await sleep(300);
  assert.equal(services.calls.length, 1, 'the probe Service is not changed during a run');
  run.current = undefined;
  await sleep(300);
  assert.ok(
    ['n0', 'n1', 'n2', 'n3', 'n5'].every((n) => latest(n)?.paused === false && latest(n)?.servicePaused === false),
  );
  assert.deepEqual(services.calls.slice(1), [
    'remove monitor-probe',
    'expose monitor-probe:8478 198.18.16.10,198.18.17.10,198.18.18.10,198.18.19.10,198.18.21.10',
  ]);
  assert.equal(coordinator.snapshot().nodes.length, 5);
  await coordinator.close();
  assert.equal(services.calls.at(-1), 'remove monitor-probe');
});

test('an agent that reconnects gets its plan again; reports older than the latest are ignored', async () => {
  const { registry, coordinator, connect, plans } = setup({ current: undefined });
  connect('n0');
  connect('n1');
  await sleep(300);
  const before = plans.get('n0')?.length ?? 0;
  registry.detach('n0', () => undefined);
  registry.attach('n0', (m: CollectorMessage) => {
    if (m.body?.$case === 'monitorPlan') plans.set('n0', [...(plans.get('n0') ?? []), m.body.value]);
  });
  await sleep(300);
  assert.ok((plans.get('n0')?.length ?? 0) > before, 'resent after the new session');
  const r = (timeMs: number) => ({
    planGeneration: 1,
    timeMs,
    intervalMs: 1000,
    paused: false,
    probes: [],
    dataplane: undefined,
    bpfMaps: [],
    incomingSources: [`t${timeMs}`],
  });
  coordinator.onReport('n0', r(10));
  coordinator.onReport('n0', r(5));
  assert.deepEqual(coordinator.snapshot().nodes.find((n) => n.nodeName === 'n0')?.incomingSources, ['t10']);
  await coordinator.close();
});

test('a node cordoned or NotReady leaves every plan and the probe Service when node status changes, and comes back', async () => {
  const status = new Map<string, NodeStatus>(
    ['n0', 'n1', 'n2', 'n3'].map((n) => [n, { ready: true, schedulable: true }]),
  );
  const { services, coordinator, connect, latest } = setup({ current: undefined }, () => status);
  for (const n of ['n0', 'n1', 'n2', 'n3']) connect(n);
  await sleep(300);
  const targets = () => new Set(['n0', 'n1', 'n2', 'n3'].flatMap((n) => latest(n)?.peers.map((p) => p.nodeName) ?? []));
  assert.deepEqual([...targets()].sort(), ['n0', 'n1', 'n2', 'n3']);
  status.set('n1', { ready: true, schedulable: false });
  status.set('n2', { ready: false, schedulable: true });
  coordinator.nodesChanged();
  await sleep(300);
  assert.deepEqual([...targets()].sort(), ['n0', 'n3'], "cordoned n1 and NotReady n2 are nobody's peer");
  assert.equal(latest('n1')?.peers.length, 2, 'a cordoned node still probes others');
  assert.equal(services.calls.at(-1), 'expose monitor-probe:8478 198.18.16.10,198.18.19.10');
  status.set('n1', { ready: true, schedulable: true });
  status.set('n2', { ready: true, schedulable: true });
  coordinator.nodesChanged();
  await sleep(300);
  assert.deepEqual([...targets()].sort(), ['n0', 'n1', 'n2', 'n3']);
  await coordinator.close();
});
