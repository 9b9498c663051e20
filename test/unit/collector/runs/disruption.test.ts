/** The disruption kind: what the scenario accepts and refuses, which events a collector can fire, the probe's wire form. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { probeStream } from '../../../../agent/drivers/probe-stream.js';
import type { AgentEntry } from '../../../../collector/agents/registry.js';
import {
  disruptionRefusal,
  type EventContext,
  fireEvent,
  refuseDisruptions,
} from '../../../../collector/runs/disruption-events.js';
import { clientSpecOf } from '../../../../collector/runs/measure-phase.js';
import { planRun } from '../../../../collector/runs/plan.js';
import { parseScenario } from '../../../../collector/runs/scenario.js';
import type { ServiceFrontend } from '../../../../core/service-frontend.js';
import { PEER_ROLE_LABEL } from '../../../../core/tools.js';
import { Measurement } from '../../../../gen/cnibench/v1/agent.js';
import { parseTimeline, timelineFromProto } from '../../../../report/disruption.js';
import { agentEntry } from '../../../support/helpers/agent-entry.js';
import { fixture } from '../../../support/helpers/fixtures.js';

function agent(id: string, node = id, peer = false): AgentEntry {
  return agentEntry(id, {
    nodeName: node,
    podIp: '198.18.0.1',
    cpus: 2,
    labels: peer ? { [PEER_ROLE_LABEL]: 'peer' } : {},
  });
}

const frontend = (o: Partial<ServiceFrontend>): ServiceFrontend => ({
  description: 'test frontend',
  expose: async () => ({ ip: '198.19.0.1', port: 1 }),
  remove: async () => undefined,
  ...o,
});

test('a disruption measurement keeps its own duration and one round whatever the scenario and the env say', () => {
  const s = parseScenario(
    { durationSeconds: 2, rounds: 3, measurements: [{ kind: 'disruption', event: 'backend-gone' }] },
    { FORTIO_DURATION: '5', ROUNDS: '4' },
  );
  const m = s.measurements[0];
  assert.equal(m?.kind, 'disruption');
  assert.deepEqual(
    [m?.id, m?.path, m?.durationSeconds, m?.rounds, m?.warmupSeconds],
    ['disruption-backend-gone', 'service', 12, 1, 0],
  );
  assert.ok(m?.kind === 'disruption' && m.eventAtSeconds === 3 && m.rate === 100 && m.services === 1000);
});

test('a disruption measurement is refused naming the field: no time after the event, more rounds, another path, an unknown event', () => {
  const bad = (m: Record<string, unknown>, field: RegExp) =>
    assert.throws(() => parseScenario({ measurements: [{ kind: 'disruption', event: 'backend-gone', ...m }] }), field);
  bad({ durationSeconds: 3.5, eventAtSeconds: 3 }, /measurements\[0\]\.durationSeconds.*after the event/s);
  bad({ rounds: 2 }, /measurements\[0\]\.rounds/);
  bad({ path: 'pod-to-pod' }, /measurements\[0\]\.path/);
  bad({ event: 'reboot' }, /measurements\[0\]\.event/);
  bad({ warmupSeconds: 1 }, /measurements\[0\]\.warmupSeconds/);
});

test('the plan picks the built-in probe stream against tcp-echo; events the collector cannot fire are refused before the run', () => {
  const s = parseScenario({
    measurements: [
      { kind: 'disruption', event: 'endpoint-removed' },
      { kind: 'disruption', event: 'dataplane-restart' },
    ],
  });
  const withPeer = [agent('n0'), agent('n1'), agent('n0-peer', 'n0', true)];
  const plan = planRun(s, withPeer, true, true);
  assert.deepEqual(
    plan.measurements.map((m) => [m.tool, m.serverTool]),
    [
      ['probe-stream', 'tcp-echo'],
      ['probe-stream', 'tcp-echo'],
    ],
  );
  const lab = frontend({ setEndpoints: async () => undefined });
  assert.throws(
    () => refuseDisruptions(s, plan, lab),
    (e: Error & { details?: { field?: string } }) =>
      /measurements\[1\]\.event: 'dataplane-restart'.*emulated/.test(e.message) &&
      e.details?.field === 'measurements[1].event',
  );
  const noPeer = planRun(s, [agent('n0'), agent('n1')], true, true);
  assert.match(disruptionRefusal('backend-gone', lab, noPeer) ?? '', /peer agent on the server's node 'n0'/);
  assert.match(disruptionRefusal('services-added', lab, plan) ?? '', /cannot create Services/);
  assert.match(disruptionRefusal('services-removed', lab, plan) ?? '', /cannot create Services/);
  const scaler = frontend({ scale: { setDummyServices: async () => ({ services: 0, programmingMs: 1 }) } as never });
  assert.equal(disruptionRefusal('services-removed', scaler, plan), undefined);
  assert.match(disruptionRefusal('endpoint-removed', frontend({}), plan) ?? '', /cannot change a Service's endpoints/);
  assert.equal(
    disruptionRefusal('dataplane-restart', frontend({ restartDataplane: async () => ({}) }), plan),
    undefined,
  );
  assert.match(disruptionRefusal('services-added', undefined, plan) ?? '', /needs a service frontend/);
  // backend-link-down: only a frontend that can cut a pod's link (the lab), and only with a peer backend.
  assert.match(disruptionRefusal('backend-link-down', lab, plan) ?? '', /cannot take a backend's link down/);
  const cutter = frontend({ cutEndpointLink: async () => ({}) });
  assert.equal(disruptionRefusal('backend-link-down', cutter, plan), undefined);
  assert.match(disruptionRefusal('backend-link-down', cutter, noPeer) ?? '', /peer agent/);
});

test('services-added scales to N at the event; services-removed (created before the stream) scales to 0 there', async () => {
  const calls: [number, number, string][] = [];
  const scale = {
    setDummyServices: async (n: number, endpoints: number, runId: string) => {
      calls.push([n, endpoints, runId]);
      return { services: n, programmingMs: 7 };
    },
  };
  const ctx = {
    services: frontend({ scale } as never),
    runId: 'r1',
    markScaled: () => undefined,
  } as unknown as EventContext;
  assert.deepEqual(await fireEvent('services-added', { services: 300 }, ctx), { services: 300, programmingMs: 7 });
  assert.deepEqual(await fireEvent('services-removed', { services: 300 }, ctx), {
    removed: 300,
    services: 0,
    programmingMs: 7,
  });
  assert.deepEqual(calls, [
    [300, 1, 'r1'],
    [0, 1, 'r1'],
  ]);
  const m = parseScenario({ measurements: [{ kind: 'disruption', event: 'services-removed', services: 500 }] })
    .measurements[0];
  assert.ok(m?.kind === 'disruption' && m.event === 'services-removed' && m.services === 500);
});

test("the collector's spec reaches the probe's arguments, and a real stream's output crosses the wire intact", () => {
  const s = parseScenario({
    measurements: [{ kind: 'disruption', event: 'backend-gone', rate: 50, keptConnections: 2, timeoutMs: 300 }],
  });
  const m = { ...(s.measurements[0] as (typeof s.measurements)[number]), tool: 'probe-stream', serverTool: 'tcp-echo' };
  const spec = clientSpecOf(m as Parameters<typeof clientSpecOf>[0]);
  assert.equal(spec?.$case, 'disruption');
  const args = probeStream.buildClientArgs({
    targetHost: '198.19.0.10',
    targetPort: 8179,
    durationSeconds: 12,
    ...(spec?.$case === 'disruption'
      ? {
          rate: spec.value.rate,
          keptConnections: spec.value.keptConnections,
          timeoutMs: spec.value.timeoutMs,
          binMs: spec.value.binMs,
          streamStartAtMs: 1234,
        }
      : {}),
  });
  assert.deepEqual(args.slice(1), [
    '--host',
    '198.19.0.10',
    '--port',
    '8179',
    '--duration',
    '12',
    '--rate',
    '50',
    '--kept',
    '2',
    '--timeout-ms',
    '300',
    '--bin-ms',
    '100',
    '--start-at-ms',
    '1234',
  ]);
  const out = fixture('probe-stream/refused.json');
  const measured = probeStream.parse(out, { targetHost: '', targetPort: 1, durationSeconds: 1 });
  const wire = Measurement.decode(Measurement.encode(measured).finish());
  assert.equal(wire.kind?.$case, 'disruption');
  if (wire.kind?.$case !== 'disruption') return;
  assert.deepEqual(timelineFromProto(wire.kind.value), { ...parseTimeline(out), kept: parseTimeline(out).kept ?? 0 });
  assert.throws(
    () =>
      probeStream.parse(fixture('probe-stream/truncated.json'), { targetHost: '', targetPort: 1, durationSeconds: 1 }),
    /probe-stream/,
  );
});
