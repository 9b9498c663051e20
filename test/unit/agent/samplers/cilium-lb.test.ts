/**
 * Decoding Cilium's LB maps and counters from bpftool's raw bytes. The real
 * captures (test/fixtures/cilium/, from a real cilium-agent v1.20.2 here) are
 * checked against what cilium-dbg printed at the same moment; the hand-made
 * entries below pin the edge cases the captures do not show (a slot without
 * its backend, the wrong layout, per-CPU sums).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type DumpEntry, parseBpftoolDumpEntries, parseBpftoolMapShow } from '../../../../agent/samplers/bpftool.js';
import { parseCiliumServiceList } from '../../../../agent/samplers/cilium-dbg.js';
import {
  decodeLb4Backends,
  decodeLb4Services,
  lbFrontends,
  metricsCount,
} from '../../../../agent/samplers/cilium-lb.js';
import { bpfRootFromCmdline, pinnedMapMemory } from '../../../../agent/samplers/cilium-reader.js';
import { fixture } from '../../../support/helpers/fixtures.js';

const hex = (bytes: number[]): string[] => bytes.map((b) => `0x${b.toString(16).padStart(2, '0')}`);
/** lb4_key + lb4_service as the agent writes them: address and port in network order, slot and count in host (little-endian) order, rev_nat in network order. */
const svc = (ip: number[], port: number, slot: number, backendId: number, count: number, revNat = 1): DumpEntry => ({
  key: [...ip, port >> 8, port & 0xff, slot & 0xff, slot >> 8, 6, 0, 0, 0],
  value: [
    backendId & 0xff,
    (backendId >> 8) & 0xff,
    0,
    0,
    count & 0xff,
    count >> 8,
    revNat >> 8,
    revNat & 0xff,
    0,
    0,
    0,
    0,
  ],
});
const backend = (id: number, ip: number[], port: number): DumpEntry => ({
  key: [id & 0xff, id >> 8, 0, 0],
  value: [...ip, port >> 8, port & 0xff, 6, 0, 0, 0, 0, 0],
});

test('frontends: slot 0 with its backend slots resolved through the backends map; a missing slot or backend leaves it unprogrammed', () => {
  const services = decodeLb4Services([
    svc([198, 19, 0, 20], 80, 0, 0, 2, 5),
    svc([198, 19, 0, 20], 80, 1, 7, 0, 5),
    svc([198, 19, 0, 20], 80, 2, 8, 0, 5),
    svc([198, 19, 0, 21], 80, 0, 0, 1, 6), // its slot 1 not written yet
    svc([198, 19, 0, 22], 80, 0, 0, 1, 7),
    svc([198, 19, 0, 22], 80, 1, 99, 0, 7), // backend 99 not in the backends map yet
    svc([198, 19, 0, 23], 53, 0, 0, 0, 8), // no endpoints
  ]);
  assert.deepEqual(services[0], {
    address: '198.19.0.20',
    port: 80,
    slot: 0,
    proto: 6,
    internalScope: false,
    backendId: 0,
    count: 2,
    revNat: 5,
    qcount: 0,
  });
  assert.equal(services[2]?.slot, 2);
  const backends = decodeLb4Backends([backend(7, [198, 18, 64, 5], 8080), backend(8, [198, 18, 64, 6], 8080)]);
  assert.deepEqual(backends.get(8), { address: '198.18.64.6', port: 8080, proto: 6, flags: 0 });
  const lb = lbFrontends(services, backends);
  assert.equal(lb.frontends, 4);
  assert.equal(lb.programmed, 1);
  assert.deepEqual(
    lb.list.map((f) => [f.address, f.backendSlots, f.backends]),
    [
      ['198.19.0.20', 2, ['198.18.64.5:8080', '198.18.64.6:8080']],
      ['198.19.0.21', 1, []],
      ['198.19.0.22', 1, []],
      ['198.19.0.23', 0, []],
    ],
  );
  const cut = lbFrontends(services, backends, 2);
  assert.equal(cut.truncated, true);
  assert.deepEqual(
    cut.list.map((f) => f.address),
    ['198.19.0.20', '198.19.0.21'],
  );
});

test('a key or value of another layout is an error naming bpftool and the map, never a skipped entry', () => {
  assert.throws(
    () => decodeLb4Services([{ key: [1, 2, 3, 4], value: [] }]),
    /bpftool: .*cilium_lb4_services_v2 entry 0: key has 4 bytes, expected 12/,
  );
  assert.throws(
    () => decodeLb4Backends([{ key: [1, 0, 0, 0], value: [1, 2, 3, 4, 5, 6, 7, 8] }]),
    /cilium_lb4_backends_v3 entry 0: value has 8 bytes, expected 12/,
  );
  assert.throws(
    () => parseBpftoolDumpEntries(JSON.stringify([{ key: ['0x01', 'zz'], value: [] }])),
    /bpftool: .*entry 0 key has a byte that is not 0xNN: zz/,
  );
});

test('the socket-LB counter: cilium_metrics count summed over CPUs and source lines for one reason and direction', () => {
  const key = (reason: number, dir: number, line: number): number[] => [
    reason,
    dir,
    line & 0xff,
    line >> 8,
    1,
    0,
    0,
    0,
  ];
  const val = (count: number): number[] => [count & 0xff, (count >> 8) & 0xff, 0, 0, 0, 0, 0, 0, ...Array(8).fill(0)];
  const dump = JSON.stringify([
    {
      key: hex(key(14, 2, 1308)),
      values: [
        { cpu: 0, value: hex(val(300)) },
        { cpu: 1, value: hex(val(4)) },
      ],
    },
    {
      key: hex(key(14, 2, 1326)),
      values: [
        { cpu: 0, value: hex(val(1)) },
        { cpu: 1, value: hex(val(0)) },
      ],
    },
    { key: hex(key(14, 1, 99)), values: [{ cpu: 0, value: hex(val(1000)) }] },
    { key: hex(key(0, 2, 50)), values: [{ cpu: 0, value: hex(val(5000)) }] },
  ]);
  assert.equal(metricsCount(parseBpftoolDumpEntries(dump), 14, 2), 305);
  assert.equal(metricsCount(parseBpftoolDumpEntries('[]'), 14, 2), 0);
});

test("the agent's bpffs from its command line, and the node's maps by pin", () => {
  assert.equal(bpfRootFromCmdline('cilium-agent\0--bpf-root=/sys/fs/bpf-n2\0--devices=eth0\0'), '/sys/fs/bpf-n2');
  assert.equal(bpfRootFromCmdline('cilium-agent\0--bpf-root\0/x\0'), '/x');
  assert.equal(bpfRootFromCmdline('cilium-agent\0--config-dir=/tmp/cilium/config-map\0'), '/sys/fs/bpf');
  const maps = [
    {
      id: 1,
      name: 'cilium_lb4_serv',
      type: 'hash',
      maxEntries: 65536,
      bytesMemlock: 100,
      pinned: ['/sys/fs/bpf/tc/globals/cilium_lb4_services_v2'],
    },
    {
      id: 2,
      name: 'cilium_ct4_glob',
      type: 'lru_hash',
      maxEntries: 1,
      bytesMemlock: 900,
      pinned: ['/sys/fs/bpf/tc/globals/cilium_ct4_global'],
    },
    { id: 3, name: '.rodata', type: 'array', maxEntries: 1, bytesMemlock: 5000, pinned: [] },
    { id: 4, name: 'other', type: 'hash', maxEntries: 1, bytesMemlock: 7000, pinned: ['/sys/fs/bpf-other/x'] },
  ];
  assert.deepEqual(
    pinnedMapMemory(maps, '/sys/fs/bpf').map((m) => [m.name, m.bytesMemlock]),
    [
      ['cilium_ct4_global', 900],
      ['cilium_lb4_services_v2', 100],
    ],
  );
});

// --- Real captures (test/fixtures/cilium/README.md says how each was taken) ---

const real = (tag: 'initial' | 'service') => {
  const services = decodeLb4Services(parseBpftoolDumpEntries(fixture(`cilium/bpftool-lb4-services-${tag}.json`)));
  const backends = decodeLb4Backends(parseBpftoolDumpEntries(fixture(`cilium/bpftool-lb4-backends-${tag}.json`)));
  return { services, backends, lb: lbFrontends(services, backends) };
};
/** The agent's own view at the same moment, in the same shape. */
const apiView = (tag: string): string[] =>
  parseCiliumServiceList(fixture(`cilium/cilium-dbg-service-list-${tag}.json`))
    .map(
      (s) =>
        `${s.address}:${s.port}/${s.scope === 'internal' ? 'i' : 'e'} -> ${[...s.activeBackends].sort().join(',')}`,
    )
    .sort();
const mapView = (lb: ReturnType<typeof lbFrontends>): string[] =>
  lb.list
    .map((f) => `${f.address}:${f.port}/${f.internalScope ? 'i' : 'e'} -> ${[...f.backends].sort().join(',')}`)
    .sort();

test("real cilium-agent maps: the decoded frontends and backends are what the agent's API listed at the same moment", () => {
  for (const tag of ['initial', 'service'] as const) {
    const { services, lb } = real(tag);
    // Every entry is a frontend, a backend slot, or the per-ClusterIP wildcard (protocol ANY, port 0).
    const wildcards = services.filter((s) => s.slot === 0 && s.port === 0 && s.proto === 0).length;
    assert.ok(wildcards >= 1, tag);
    assert.equal(services.length, lb.frontends + wildcards + services.filter((s) => s.slot > 0).length);
    assert.deepEqual(mapView(lb), apiView(tag), tag);
  }
  // The Service the capture created: its ClusterIP with the one backend the EndpointSlice named.
  const { lb } = real('service');
  const svc = lb.list.find((f) => f.port === 80);
  assert.deepEqual(svc?.backends, ['198.18.0.10:8080']);
  assert.equal(lb.programmed, real('initial').lb.programmed + 1);
});

test('real cilium_metrics: the socket-LB count moved by at least the connections made through the ClusterIP', () => {
  const count = (tag: string) =>
    metricsCount(parseBpftoolDumpEntries(fixture(`cilium/bpftool-metrics-${tag}.json`)), 14, 2);
  assert.ok(count('service') - count('initial') >= 50, `${count('initial')} -> ${count('service')}`);
});

test("real pinned maps: the node's maps by their full names, largest first", () => {
  const maps = parseBpftoolMapShow(fixture('cilium/bpftool-f-map-show-initial.json'));
  const pinned = pinnedMapMemory(maps, bpfRootFromCmdline(fixture('cilium/agent-cmdline.txt')));
  assert.ok(pinned.length > 10);
  assert.ok(pinned.some((m) => m.name === 'cilium_lb4_services_v2'));
  assert.ok(pinned.every((m, i) => i === 0 || (pinned[i - 1]?.bytesMemlock ?? 0) >= m.bytesMemlock));
});

test('real error and truncated outputs are errors naming bpftool or cilium-dbg, never an empty state', () => {
  assert.throws(
    () => parseBpftoolDumpEntries(fixture('cilium/bpftool-dump-missing-pin.json')),
    /bpftool: .*bpftool reported an error/s,
  );
  assert.throws(
    () => parseBpftoolDumpEntries(fixture('cilium/bpftool-lb4-services-truncated.json')),
    /bpftool: cannot parse output/,
  );
  assert.throws(
    () => parseCiliumServiceList(fixture('cilium/cilium-dbg-service-list-truncated.json')),
    /cilium-dbg: cannot parse output/,
  );
  assert.throws(
    () => parseBpftoolMapShow(fixture('cilium/bpftool-f-map-show-truncated.json')),
    /bpftool: cannot parse output/,
  );
});
