/**
 * The inventory's pure parts: what a Node says about readiness and cordon, and
 * the status key that makes the monitor plan again only when one of those
 * changes (not on every status heartbeat).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { coverageOf, nodeStatusKey, summarizeNode } from '../../../../collector/kubernetes/inventory.js';

const node = (
  name: string,
  ready: 'True' | 'False' | 'Unknown' | undefined,
  unschedulable?: boolean,
  heartbeat = '2026-01-01T00:00:00Z',
): V1Node => ({
  metadata: { name, labels: { 'node.kubernetes.io/instance-type': 'm5.large' } },
  spec: unschedulable === undefined ? {} : { unschedulable },
  status: {
    conditions: ready ? [{ type: 'Ready', status: ready, lastHeartbeatTime: new Date(heartbeat) }] : [],
    nodeInfo: { kernelVersion: '6.8.0' } as never,
  },
});

test('summarizeNode: Ready only when the Ready condition is True; cordoned when spec.unschedulable', () => {
  assert.deepEqual(summarizeNode(node('a', 'True')), {
    name: 'a',
    ready: true,
    schedulable: true,
    worker: true,
    kernel: '6.8.0',
    instanceType: 'm5.large',
  });
  assert.equal(summarizeNode(node('b', 'False')).ready, false);
  assert.equal(summarizeNode(node('c', 'Unknown')).ready, false);
  assert.equal(summarizeNode(node('d', undefined)).ready, false, 'no condition yet: not Ready');
  assert.equal(summarizeNode(node('e', 'True', true)).schedulable, false);
  assert.equal(summarizeNode(node('f', 'True', false)).schedulable, true);
});

test('nodeStatusKey changes on cordon, readiness and membership, not on heartbeats or order', () => {
  const base = [node('a', 'True'), node('b', 'True')].map(summarizeNode);
  const key = nodeStatusKey(base);
  assert.equal(
    nodeStatusKey([node('b', 'True', false, '2026-01-01T00:00:10Z'), node('a', 'True')].map(summarizeNode)),
    key,
    'a heartbeat or another order is no change',
  );
  assert.notEqual(nodeStatusKey([node('a', 'True', true), node('b', 'True')].map(summarizeNode)), key, 'cordon');
  assert.notEqual(nodeStatusKey([node('a', 'True'), node('b', 'False')].map(summarizeNode)), key, 'NotReady');
  assert.notEqual(nodeStatusKey([node('a', 'True')].map(summarizeNode)), key, 'a node gone');
});

test('coverageOf: only Ready, schedulable nodes are expected to run an agent', () => {
  const nodes = [node('a', 'True'), node('b', 'True', true), node('c', 'False')].map(summarizeNode);
  assert.deepEqual(coverageOf(nodes, []), { nodes: 3, missing: ['a'], agentsRunning: 0 });
});
