/**
 * Where a run's load goes (issue 17 item 7): without a named node only
 * schedulable workers carry load (a control-plane, tainted, cordoned or
 * NotReady node keeps its agent for monitoring and gets no load); a node the
 * scenario names is used whatever it is.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import type { AgentEntry } from '../../../../collector/agents/registry.js';
import { summarizeNode } from '../../../../collector/kubernetes/inventory.js';
import { planRun } from '../../../../collector/runs/plan.js';
import { parseScenario } from '../../../../collector/runs/scenario.js';
import { agentEntry } from '../../../support/helpers/agent-entry.js';

function agent(id: string): AgentEntry {
  return agentEntry(id, {
    podIp: '198.18.0.1',
    cpus: 2,
    tools: [{ name: 'iperf3', version: '3.12', path: '/usr/bin/iperf3' }],
  });
}

const scenario = (extra: object = {}) =>
  parseScenario({ measurements: [{ kind: 'throughput', path: 'pod-to-pod' }], ...extra });
const agents = ['a-control', 'b-worker', 'c-worker'].map(agent);
const workers = (n: string): boolean => n !== 'a-control';

test('unnamed: server and client on schedulable workers, the control plane skipped', () => {
  const plan = planRun(scenario(), agents, false, false, workers);
  assert.deepEqual([plan.server.id, plan.client.id], ['b-worker', 'c-worker']);
  const all = planRun(scenario(), agents, false, false);
  assert.deepEqual([all.server.id, all.client.id], ['a-control', 'b-worker'], 'outside Kubernetes every node may load');
});

test('a named node carries load whatever it is', () => {
  const plan = planRun(scenario({ serverNode: 'a-control' }), agents, false, false, workers);
  assert.deepEqual([plan.server.id, plan.client.id], ['a-control', 'b-worker']);
});

test('too few workers: the refusal says which nodes were left out and how to use them', () => {
  assert.throws(
    () => planRun(scenario(), agents, false, false, (n) => n === 'b-worker'),
    /clientNode: need a connected agent on a second schedulable worker node \(have 3; not for load: a-control, c-worker .*name one in clientNode/,
  );
});

test('summarizeNode: control-plane role and NoSchedule/NoExecute taints are not workers; PreferNoSchedule is', () => {
  const node = (labels: Record<string, string>, taints: { key: string; effect: string }[] = []): V1Node => ({
    metadata: { name: 'n', labels },
    spec: { taints },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
  assert.equal(summarizeNode(node({})).worker, true);
  assert.equal(summarizeNode(node({ 'node-role.kubernetes.io/control-plane': '' })).worker, false);
  assert.equal(summarizeNode(node({}, [{ key: 'gpu', effect: 'NoSchedule' }])).worker, false);
  assert.equal(summarizeNode(node({}, [{ key: 'x', effect: 'NoExecute' }])).worker, false);
  assert.equal(summarizeNode(node({}, [{ key: 'x', effect: 'PreferNoSchedule' }])).worker, true);
});
