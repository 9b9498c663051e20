import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AgentEntry } from '../../../../collector/agents/registry.js';
import { SERVICE_BACKEND_PORT_OFFSET, serverPortFor, warmupKey } from '../../../../collector/runs/measure-phase.js';
import type { PlannedMeasurement } from '../../../../collector/runs/plan.js';
import { parseScenario } from '../../../../collector/runs/scenario.js';

test('a server behind a Service listens on its own port, never on the one its direct paths use', () => {
  for (const path of ['pod-to-pod', 'pod-to-pod-same-node', 'host-to-host', 'pod-to-host'] as const)
    assert.equal(serverPortFor(path, 8081), 8081, path);
  assert.equal(serverPortFor('service', 8081), 8081 + SERVICE_BACKEND_PORT_OFFSET);
  assert.ok(SERVICE_BACKEND_PORT_OFFSET > 1, 'not the data port next to a control port');
});

const planned = (over: Record<string, unknown>): PlannedMeasurement =>
  ({
    ...parseScenario({ measurements: [over] }).measurements[0],
    tool: String(over.tool ?? 'iperf3'),
    serverTool: 'x',
  }) as PlannedMeasurement;
const place = { client: { id: 'n1' } as AgentEntry, clientHostNetwork: false };
const target = { host: '198.18.16.10', port: 5201 };

test('one warm-up per tool, mode, client and target (and sweep step): 8 streams after 1 on the same path is warm', () => {
  const one = warmupKey(planned({ kind: 'throughput', path: 'pod-to-pod', streams: 1 }), place, target);
  assert.equal(warmupKey(planned({ kind: 'throughput', path: 'pod-to-pod', streams: 8 }), place, target), one);
  assert.notEqual(
    warmupKey(planned({ kind: 'throughput', path: 'pod-to-pod', streams: 1 }), place, { ...target, port: 5301 }),
    one,
    'another target',
  );
  assert.notEqual(
    warmupKey(
      planned({ kind: 'throughput', path: 'pod-to-pod', streams: 1 }),
      { ...place, clientHostNetwork: true },
      target,
    ),
    one,
    'another client namespace',
  );
  assert.notEqual(
    warmupKey(planned({ kind: 'throughput', path: 'pod-to-pod', streams: 1 }), place, target, 5000),
    one,
    'another sweep step',
  );
  const ka = warmupKey(planned({ kind: 'http', path: 'pod-to-pod', tool: 'wrk', mode: 'keepalive' }), place, target);
  assert.notEqual(
    warmupKey(planned({ kind: 'http', path: 'pod-to-pod', tool: 'wrk', mode: 'short-connection' }), place, target),
    ka,
    'short connections warm apart',
  );
  assert.equal(
    warmupKey(planned({ kind: 'rr', path: 'pod-to-pod', tool: 'netperf', mode: 'crr' }), place, target),
    warmupKey(planned({ kind: 'rr', path: 'pod-to-pod', tool: 'netperf', mode: 'rr' }), place, target),
  );
});

test('throughputDurationSeconds sets throughput rounds only; a measurement own duration still wins', () => {
  const s = parseScenario({
    durationSeconds: 2,
    throughputDurationSeconds: 1,
    measurements: [
      { kind: 'throughput', path: 'pod-to-pod' },
      { kind: 'http', path: 'pod-to-pod' },
      { kind: 'throughput', path: 'service', durationSeconds: 3 },
    ],
  });
  assert.deepEqual(
    s.measurements.map((m) => m.durationSeconds),
    [1, 2, 3],
  );
});
