/**
 * Peer selection: consistent hashing over node names gives every node exactly
 * k probers, moves few assignments when a node comes or goes, and the plans
 * skip what must not be probed (not-ready or cordoned nodes, agents without a
 * pod IP) and pause the nodes a run uses.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildPlans,
  eligibleTargets,
  type MonitorAgentView,
  serviceEndpoints,
} from '../../../../collector/monitor/plans.js';
import { incomingOf, ringPosition, selectPeers } from '../../../../collector/monitor/ring.js';
import { nodesOfRun } from '../../../../collector/monitor/run-nodes.js';

const names = (n: number): string[] => Array.from({ length: n }, (_, i) => `node-${i}`);

test('ring positions are stable 64-bit hashes of the name', () => {
  assert.equal(ringPosition('node-0'), ringPosition('node-0'));
  assert.notEqual(ringPosition('node-0'), ringPosition('node-1'));
  assert.equal(typeof ringPosition('x'), 'bigint');
});

test('a node probes the k nodes after it on the ring, never itself, all others when there are few', () => {
  const all = names(50);
  const peers = selectPeers('node-7', all, 10);
  assert.equal(peers.length, 10);
  assert.ok(!peers.includes('node-7'));
  assert.equal(new Set(peers).size, 10);
  assert.deepEqual(selectPeers('node-7', [...all].reverse(), 10), peers, 'member order does not matter');
  assert.deepEqual(new Set(selectPeers('node-1', names(5), 10)), new Set(['node-0', 'node-2', 'node-3', 'node-4']));
  assert.deepEqual(selectPeers('a', ['a'], 10), []);
  assert.deepEqual(selectPeers('a', ['b', 'b', 'c'], 1).length, 1);
});

test('every node is probed by exactly k others', () => {
  for (const [n, k] of [
    [50, 10],
    [5, 10],
    [200, 3],
    [11, 10],
  ] as const) {
    const incoming = incomingOf(names(n), k);
    for (const [target, sources] of incoming)
      assert.equal(sources.length, Math.min(k, n - 1), `${n} nodes, k=${k}: ${target} has ${sources.length}`);
  }
});

test('a node leaving changes only the peers of those that probed it, by one each', () => {
  const all = names(100);
  const before = new Map(all.map((s) => [s, selectPeers(s, all, 10)]));
  const rest = all.filter((n) => n !== 'node-42');
  let changed = 0;
  for (const s of rest) {
    const after = selectPeers(s, rest, 10);
    const was = before.get(s) ?? [];
    if (was.includes('node-42')) {
      changed++;
      assert.equal(after.filter((p) => !was.includes(p)).length, 1, `${s} gained one peer`);
    } else assert.deepEqual(after, was, `${s} kept its peers`);
  }
  assert.equal(changed, 10);
});

const cap = (over: Partial<MonitorAgentView['capability']> = {}) => ({
  enabled: true,
  probePort: 8478,
  hostProbePort: 8478,
  peers: 10,
  intervalMs: 30_000,
  ...over,
});
const agent = (node: string, over: Partial<MonitorAgentView> = {}): MonitorAgentView => ({
  id: node,
  node,
  podIp: `198.18.16.${node.length}`,
  hostIp: '198.18.0.1',
  connected: true,
  capability: cap(),
  ...over,
});

test('targets skip cordoned and not-ready nodes, agents without a pod IP, disconnected or not monitoring ones', () => {
  const agents = [
    agent('ok'),
    agent('cordoned'),
    agent('notready'),
    agent('noip', { podIp: '' }),
    agent('gone', { connected: false }),
    agent('off', { capability: cap({ enabled: false }) }),
    agent('unknown'),
  ];
  const nodeStatus = new Map([
    ['ok', { ready: true, schedulable: true }],
    ['cordoned', { ready: true, schedulable: false }],
    ['notready', { ready: false, schedulable: true }],
    ['noip', { ready: true, schedulable: true }],
  ]);
  assert.deepEqual(
    eligibleTargets({ agents, nodeStatus }).map((a) => a.node),
    ['ok'],
  );
  assert.deepEqual(
    eligibleTargets({ agents })
      .map((a) => a.node)
      .sort(),
    ['cordoned', 'notready', 'ok', 'unknown'],
    'the lab has no node status: every agent with an IP',
  );
  const plans = buildPlans({ agents, nodeStatus, pausedNodes: new Set() });
  assert.deepEqual(
    [...plans.keys()].sort(),
    ['cordoned', 'noip', 'notready', 'ok', 'unknown'],
    'every connected monitoring agent gets a plan (a cordoned node still probes)',
  );
  assert.deepEqual(
    plans.get('cordoned')?.peers.map((p) => p.nodeName),
    ['ok'],
  );
  assert.deepEqual(plans.get('ok')?.peers, [], 'nobody else to probe');
});

test("a run pauses its nodes, marks them in their peers' plans, and pauses Service probes everywhere", () => {
  const agents = ['a', 'b', 'c', 'd'].map((n) => agent(n));
  const plans = buildPlans({
    agents,
    pausedNodes: new Set(['a', 'b']),
    runId: 'r1',
    service: { name: 'monitor-probe', ip: '198.19.0.10', port: 8478 },
  });
  assert.equal(plans.get('a')?.paused, true);
  assert.match(plans.get('a')?.pauseReason ?? '', /run r1/);
  assert.equal(plans.get('c')?.paused, false);
  for (const p of plans.values()) assert.equal(p.servicePaused, true);
  const c = plans.get('c');
  assert.deepEqual(
    c?.peers
      .filter((p) => p.paused)
      .map((p) => p.nodeName)
      .sort(),
    ['a', 'b'],
  );
  const idle = buildPlans({ agents, pausedNodes: new Set() });
  assert.ok([...idle.values()].every((p) => !p.paused && !p.servicePaused && p.peers.every((x) => !x.paused)));
});

test("one agent per node (a node's second agent is no extra target); no host probes without a host IP", () => {
  const agents = [
    agent('a', { podIp: '198.18.16.10' }),
    agent('a', { id: 'a-peer', podIp: '198.18.16.11' }),
    agent('b', { hostIp: '', podIp: '198.18.17.10' }),
  ];
  const plans = buildPlans({ agents, pausedNodes: new Set() });
  assert.deepEqual([...plans.keys()].sort(), ['a', 'b']);
  assert.equal(plans.get('a')?.peers[0]?.hostProbePort, 0);
  assert.deepEqual(serviceEndpoints({ agents }), [
    { ip: '198.18.16.10', port: 8478 },
    { ip: '198.18.17.10', port: 8478 },
  ]);
});

test('the nodes a run uses come from its stored description, the peer agent mapped to its node', () => {
  const nodeOf = (id: string) => ({ 'lab-n0': 'lab-n0', 'lab-n1': 'lab-n1', 'lab-n0-peer': 'lab-n0' })[id];
  assert.deepEqual(
    [
      ...nodesOfRun({ server: { node: 'lab-n0' }, client: { node: 'lab-n1' }, peer: { node: 'lab-n0-peer' } }, nodeOf, [
        'lab-n0',
        'lab-n1',
        'lab-n2',
      ]),
    ].sort(),
    ['lab-n0', 'lab-n1'],
  );
  assert.deepEqual([...nodesOfRun({}, nodeOf, ['x', 'y'])].sort(), ['x', 'y'], 'no description yet: every node pauses');
});
