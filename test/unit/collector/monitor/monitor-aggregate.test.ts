/**
 * The collector's monitoring view: cell states from each source's latest
 * round, latency from the window's histograms merged (checked against the
 * percentile of all raw samples), coverage per node, and node states.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AgentMonitorState, buildSnapshot, coverage } from '../../../../collector/monitor/aggregate.js';
import { LatencyHistogram } from '../../../../core/histogram.js';
import type { MonitorPlan, MonitorReport, ProbeOutcome } from '../../../../gen/cnibench/v1/agent.js';

const peer = (nodeName: string, over: Partial<MonitorPlan['peers'][number]> = {}) => ({
  nodeName,
  podIp: '198.18.16.10',
  probePort: 8478,
  hostIp: '',
  hostProbePort: 0,
  paused: false,
  ...over,
});
const plan = (peers: MonitorPlan['peers'], over: Partial<MonitorPlan> = {}): MonitorPlan => ({
  generation: 1,
  peers,
  service: undefined,
  paused: false,
  pauseReason: '',
  servicePaused: false,
  ...over,
});
const ok = (type: string, target: string, us: number[]): ProbeOutcome => ({
  type,
  targetNode: target,
  ok: us.length,
  failed: 0,
  errorReason: '',
  latency: LatencyHistogram.fromSamples(us).toProto(),
  answeredBy: [],
});
const fail = (type: string, target: string, reason: string): ProbeOutcome => ({
  type,
  targetNode: target,
  ok: 0,
  failed: 1,
  errorReason: reason,
  latency: undefined,
  answeredBy: [],
});
const report = (probes: ProbeOutcome[], over: Partial<MonitorReport> = {}): MonitorReport => ({
  planGeneration: 1,
  timeMs: 0,
  intervalMs: 1000,
  paused: false,
  probes,
  dataplane: undefined,
  bpfMaps: [],
  incomingSources: [],
  ...over,
});

test('cells take their state from the latest round and their latency from the window, merged', () => {
  const rounds = [
    [100, 120],
    [110, 5000],
    [130, 140],
  ];
  const a: AgentMonitorState = {
    node: 'a',
    connected: true,
    plan: plan([peer('b')]),
    reports: [
      ...rounds.map((us, i) => ({
        report: report([ok('tcp-rr', 'b', us), ok('tcp-connect', 'b', [200])], { timeMs: i }),
        receivedMs: 1000 + i,
      })),
      {
        report: report([ok('tcp-rr', 'b', [150]), fail('tcp-connect', 'b', 'timeout')], { timeMs: 9 }),
        receivedMs: 1900,
      },
    ],
  };
  const s = buildSnapshot([a], 2000);
  const rr = s.matrix.find((c) => c.type === 'tcp-rr');
  const all = LatencyHistogram.fromSamples([...rounds.flat(), 150]);
  assert.equal(rr?.state, 'ok');
  assert.equal(rr?.samples, 7);
  assert.equal(rr?.p50Us, all.percentile(50));
  assert.equal(rr?.p99Us, all.percentile(99));
  assert.equal(rr?.ageMs, 100);
  const connect = s.matrix.find((c) => c.type === 'tcp-connect');
  assert.equal(connect?.state, 'failing');
  assert.equal(connect?.errorReason, 'timeout');
  assert.equal(connect?.failures, 1);
  assert.equal(s.summary?.pairsFailing, 1);
  const lat = s.summary?.latency.find((l) => l.type === 'tcp-rr');
  assert.equal(lat?.p99Us, all.percentile(99));
});

test('paused, missing and pending cells; host types only for peers with a host responder; the Service cell', () => {
  const a: AgentMonitorState = {
    node: 'a',
    connected: true,
    plan: plan([peer('b', { hostIp: '198.18.0.2', hostProbePort: 8478 }), peer('c', { paused: true })], {
      generation: 2,
      service: { name: 'monitor-probe', ip: '198.19.0.10', port: 8478 },
    }),
    reports: [
      {
        report: report([ok('tcp-rr', 'b', [100]), { ...ok('http-service', '', [900]), answeredBy: ['c'] }], {
          planGeneration: 2,
        }),
        receivedMs: 0,
      },
    ],
  };
  const s = buildSnapshot([a], 10);
  const state = (type: string, target: string) =>
    s.matrix.find((c) => c.type === type && c.targetNode === target)?.state;
  assert.equal(state('host-tcp-rr', 'b'), 'missing');
  assert.equal(state('tcp-connect', 'c'), 'paused');
  assert.equal(s.matrix.filter((c) => c.targetNode === 'c').length, 2, 'no host types for c');
  assert.deepEqual(s.matrix.find((c) => c.type === 'http-service')?.answeredBy, ['c']);
  const older = buildSnapshot([{ ...a, plan: { ...(a.plan as MonitorPlan), generation: 3 } }], 10);
  assert.equal(older.matrix.find((c) => c.type === 'host-tcp-rr')?.state, 'pending', 'the report predates the plan');
});

test('coverage per node, and node states: probing, paused, starting, stale, disconnected', () => {
  const mk = (
    node: string,
    peers: string[],
    probes: ProbeOutcome[],
    over: Partial<AgentMonitorState> = {},
  ): AgentMonitorState => ({
    node,
    connected: true,
    plan: plan(peers.map((p) => peer(p))),
    reports: [{ report: report(probes), receivedMs: 1000 }],
    ...over,
  });
  const agents = [
    mk('a', ['c'], [ok('tcp-connect', 'c', [1]), ok('tcp-rr', 'c', [1])]),
    mk('b', ['c'], [fail('tcp-connect', 'c', 'refused'), ok('tcp-rr', 'c', [1])]),
    mk('c', [], [], { plan: plan([], { paused: true }) }),
    mk('d', [], [], { reports: [{ report: report([]), receivedMs: 0 }] }),
    mk('e', [], [], { connected: false }),
    mk('f', [], [], { reports: [] }),
  ];
  const s = buildSnapshot(agents, 4000);
  const c = s.nodes.find((n) => n.nodeName === 'c');
  assert.equal(c?.probedOk, 1);
  assert.equal(c?.probedFailing, 1);
  assert.deepEqual(Object.fromEntries(s.nodes.map((n) => [n.nodeName, n.state])), {
    a: 'probing',
    b: 'probing',
    c: 'paused',
    d: 'stale',
    e: 'disconnected',
    f: 'starting',
  });
  assert.deepEqual([...(coverage(s.matrix).get('c')?.failing ?? [])], ['b']);
  assert.equal(s.summary?.probing, 2);
  assert.equal(s.summary?.stale, 1);
});

test("a node's dataplane comes from its latest report, fill ratio included", () => {
  const dataplane = {
    timeMs: 5,
    conntrackCount: 850,
    conntrackMax: 1000,
    iptablesRules: 30,
    kubeServicesRules: 12,
    processes: [],
    errors: [],
  } as unknown as MonitorReport['dataplane'];
  const a: AgentMonitorState = {
    node: 'a',
    connected: true,
    plan: plan([]),
    reports: [
      {
        report: report([], {
          dataplane,
          bpfMaps: [{ name: 'm', type: 'hash', maps: 1, maxEntries: 20, bytesMemlock: 100, entries: 17 }],
        }),
        receivedMs: 0,
      },
    ],
  };
  const d = buildSnapshot([a], 0).nodes[0]?.dataplane;
  assert.equal(d?.conntrackFillRatio, 0.85);
  assert.equal(d?.kubeServicesRules, 12);
  assert.equal(d?.bpfMaps[0]?.entries, 17);
});
