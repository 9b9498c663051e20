/**
 * The decisions on Cilium nodes, as pure logic: when a Service or a sweep step
 * counts as programmed from Cilium's LB state, what the report takes as the
 * evidence that Cilium translated a Service row's traffic, and BPF map memory
 * per phase. The decoding of real maps is tested on captured output in
 * cilium-lb.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { aboveBaseline, baselineOf, checkSync, serviceSyncTarget } from '../../../../collector/runs/sync.js';
import { CiliumState, DataplaneSample, type LbFrontend } from '../../../../gen/cnibench/v1/agent.js';
import { renderBpfMemory, renderSweep } from '../../../../report/markdown.js';
import { bpfMemoryOf } from '../../../../report/phase-dataplane.js';
import type { PhaseRecord } from '../../../../report/records.js';
import { dnatDelta, type ReportRow, socketLbDelta } from '../../../../report/report.js';
import { buildSweep } from '../../../../report/sweep.js';

const fe = (address: string, port: number, backends: string[], slots = backends.length): LbFrontend => ({
  address,
  port,
  protocol: 'TCP',
  internalScope: false,
  backendSlots: slots,
  backends,
});
const cilium = (over: Partial<CiliumState>): CiliumState =>
  CiliumState.fromPartial({
    bpffs: '/sys/fs/bpf',
    frontends: 2,
    programmedFrontends: 2,
    frontendList: [fe('198.19.0.1', 443, ['198.18.0.10:6443'])],
    ...over,
  });
const sample = (over: Partial<DataplaneSample>): DataplaneSample =>
  DataplaneSample.fromPartial({ kubeServicesRules: 0, ...over });

test('a Cilium node: the new Service is programmed once its own frontend holds its backend, whatever the counts', () => {
  const before = sample({ cilium: cilium({}) });
  const target = serviceSyncTarget(before, { ip: '198.19.0.20', port: 80 }, ['198.18.64.5:8080']);
  assert.deepEqual(target, {
    ciliumFrontends: 3,
    ciliumFrontend: { address: '198.19.0.20', port: 80, backends: ['198.18.64.5:8080'] },
  });
  // Not there yet.
  assert.match(checkSync(before, target).why, /Cilium LB has no frontend 198\.19\.0\.20:80/);
  // Frontend written, its backend slot not yet: not programmed (traffic would be dropped).
  const noBackend = sample({
    cilium: cilium({
      frontends: 3,
      frontendList: [fe('198.19.0.1', 443, ['198.18.0.10:6443']), fe('198.19.0.20', 80, [], 1)],
    }),
  });
  assert.match(
    checkSync(noBackend, target).why,
    /frontend 198\.19\.0\.20:80 lacks backend 198\.18\.64\.5:8080 \(has none\)/,
  );
  // Present with its backend: programmed even though another Service went away meanwhile (count 2 < 3).
  const ready = sample({
    cilium: cilium({
      frontends: 2,
      programmedFrontends: 2,
      frontendList: [fe('198.19.0.20', 80, ['198.18.64.5:8080'])],
    }),
  });
  assert.equal(checkSync(ready, target).ok, true);
  assert.equal(checkSync(ready, target).ciliumFrontends, 2);
});

test('a truncated frontend list falls back to the count of frontends with all their backends', () => {
  const target = {
    ciliumFrontends: 1001,
    ciliumFrontend: { address: '198.19.99.99', port: 80, backends: ['198.18.64.5:8080'] },
  };
  const at = (programmed: number) =>
    sample({
      cilium: cilium({ frontends: 1001, programmedFrontends: programmed, frontendsTruncated: true, frontendList: [] }),
    });
  assert.match(checkSync(at(1000), target).why, /Cilium LB has 1000 of 1001 frontends with all their backends/);
  assert.equal(checkSync(at(1001), target).ok, true);
});

test("a failed Cilium read, or a node without Cilium's maps, never counts as programmed; counter-only failures do not block", () => {
  const target = { ciliumFrontends: 2 };
  assert.match(
    checkSync(sample({ cilium: cilium({}), errors: ['cilium: bpftool: exited with 255'] }), target).why,
    /^cilium: bpftool/,
  );
  assert.match(checkSync(sample({}), target).why, /no Cilium LB maps on the node/);
  assert.equal(
    checkSync(sample({ cilium: cilium({}), errors: ['cilium cilium_metrics: bpftool: exited with 255'] }), target).ok,
    true,
  );
});

test('a sweep step on Cilium: frontends above the baseline; KUBE-SERVICES too only where kube-proxy also runs', () => {
  assert.deepEqual(baselineOf(sample({ cilium: cilium({ programmedFrontends: 7 }) })), {
    kubeServicesRules: 0,
    ciliumFrontends: 7,
  });
  assert.deepEqual(aboveBaseline({ kubeServicesRules: 0, ciliumFrontends: 7 }, 3000), { ciliumFrontends: 3007 });
  assert.deepEqual(aboveBaseline({ kubeServicesRules: 12, ciliumFrontends: 7 }, 3000), {
    ciliumFrontends: 3007,
    kubeServicesRules: 3012,
  });
  // kube-proxy nodes are unchanged.
  assert.deepEqual(baselineOf(sample({ kubeServicesRules: 57 })), { kubeServicesRules: 57 });
  assert.deepEqual(
    serviceSyncTarget(sample({ kubeServicesRules: 57 }), { ip: '198.19.0.20', port: 80 }, ['198.18.64.5:8080']),
    { kubeServicesRules: 58 },
  );
  const step = aboveBaseline({ kubeServicesRules: 0, ciliumFrontends: 7 }, 3000);
  assert.match(
    checkSync(sample({ cilium: cilium({ frontends: 3007, programmedFrontends: 3000 }) }), step).why,
    /3000 of 3007/,
  );
  assert.equal(checkSync(sample({ cilium: cilium({ frontends: 3007, programmedFrontends: 3007 }) }), step).ok, true);
});

test("Cilium's translation evidence: socket-LB delta between the client's boundary samples, and no DNAT figure there", () => {
  const at = (n: number | undefined) => sample({ cilium: cilium(n === undefined ? {} : { socketLbXlatedClosed: n }) });
  assert.equal(socketLbDelta(at(100), at(4_812)), 4_712);
  assert.equal(socketLbDelta(at(undefined), at(10)), null, 'a counter that was not read is not zero');
  assert.equal(socketLbDelta(at(10), undefined), null);
  assert.equal(socketLbDelta(at(10), at(3)), null, 'a counter that went back is unknown, not negative');
  assert.equal(socketLbDelta(sample({}), sample({})), null, 'kube-proxy nodes have no socket-LB figure');
  // No KUBE-SEP chains on a Cilium node: no "DNAT +0" beside the socket-LB figure.
  assert.equal(dnatDelta(at(1), at(2)), null);
  assert.equal(
    dnatDelta(
      sample({ chains: [{ chain: 'KUBE-SEP-A', packets: 1, bytes: 0 }] }),
      sample({ chains: [{ chain: 'KUBE-SEP-A', packets: 9, bytes: 0 }] }),
    ),
    8,
  );
});

test('BPF map memory per phase: Cilium pinned maps where read, else kernel-wide, with the largest maps', () => {
  const top = [
    { name: 'cilium_lb4_services_v2', type: 'hash', maxEntries: 65536, bytesMemlock: 5_500_000 },
    { name: 'cilium_ct4_global', type: 'lru_hash', maxEntries: 524288, bytesMemlock: 60_000_000 },
  ];
  const c = bpfMemoryOf([
    sample({
      bpf: { maps: 300, maxEntries: 1, bytesMemlock: 999e6, lbServiceMaxEntries: 0, topMaps: [] },
      cilium: cilium({ pinnedMaps: 41, pinnedBytesMemlock: 289_700_000, topMaps: top }),
    }),
  ]);
  assert.deepEqual(c, {
    scope: 'cilium-bpffs',
    maps: 41,
    bytesMemlock: 289_700_000,
    top,
    lbFrontends: { programmed: 2, total: 2 },
  });
  assert.equal(
    bpfMemoryOf([sample({ bpf: { maps: 3, maxEntries: 1, bytesMemlock: 4096, lbServiceMaxEntries: 0, topMaps: [] } })])
      ?.scope,
    'kernel',
  );
  assert.equal(bpfMemoryOf([sample({})]), null);
  const row = { measurement: 'HTTP keepalive service', dataplane: [{ node: 'n1', bpf: c }] } as unknown as ReportRow;
  const text = renderBpfMemory([row]).join('\n');
  assert.match(
    text,
    /\| HTTP keepalive service \| n1 \| 41 \| 289\.7 MB \| 2 \/ 2 \| cilium_lb4_services_v2 5\.5 MB, cilium_ct4_global 60\.0 MB \|/,
  );
  assert.deepEqual(renderBpfMemory([{ ...row, dataplane: [] } as unknown as ReportRow]), []);
});

test("a sweep on Cilium shows the fewest frontends of all nodes per step, and the column only when every node had Cilium's maps", () => {
  const phase = (index: number, detail: unknown): PhaseRecord => ({
    runId: 'r',
    index,
    name: `p${index}`,
    state: 'succeeded',
    error: '',
    startedMs: 0,
    endedMs: 0,
    detail,
  });
  const nodes = (a: number, b: number | null) => ({
    a: { kubeServicesRules: 0, nftServiceIps: null, ciliumFrontends: a },
    b: { kubeServicesRules: 0, nftServiceIps: null, ciliumFrontends: b },
  });
  const t = buildSweep(
    [
      phase(0, { scale: { services: 0 }, nodes: nodes(3, 3) }),
      phase(1, { scale: { services: 3000 }, nodes: nodes(3003, 3004) }),
    ],
    [],
  );
  assert.deepEqual(
    t?.steps.map((s) => s.ciliumFrontends),
    [3, 3003],
  );
  assert.match(
    renderSweep(t!).join('\n'),
    /\| dummy Services \| programming s \| sync s \(last sample s\) \| programming latency \| Cilium LB frontends \|[\s\S]*\| 3,000 \| — \| — \| — \| 3,003 \|/,
  );
  const mixed = buildSweep([phase(0, { scale: { services: 0 }, nodes: nodes(3, null) })], []);
  assert.equal(mixed?.steps[0]?.ciliumFrontends, null);
});
