/**
 * Dataplane gauges from real captured tool output (the fixtures the samplers
 * are tested on): names and labels, a failed read keeps the previous values,
 * a map that went away loses its series, BPF maps grouped by name.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { groupBpfMaps, MAX_COUNTED_MAPS, mapsToCount } from '../../../../agent/monitor/bpf-maps.js';
import { dataplaneSeries, failedSections } from '../../../../agent/monitor/dataplane-series.js';
import { AgentMetrics } from '../../../../agent/monitor/metrics.js';
import { parseBpftoolMapShow } from '../../../../agent/samplers/bpftool.js';
import { parseNfConntrackStat } from '../../../../agent/samplers/conntrack.js';
import { fixture } from '../../../support/helpers/fixtures.js';
import { fixtureMaps, fixtureSample } from '../../../support/helpers/monitor-support.js';

test('a sample becomes gauges labelled only by node and table, map or process', () => {
  const s = dataplaneSeries('n1', fixtureSample(), fixtureMaps(), 30_000);
  assert.deepEqual(s.failed, []);
  assert.deepEqual(s.kubeServicesRules, [{ labels: { node: 'n1' }, value: 2 }]);
  assert.ok(s.iptablesRules?.some((x) => x.labels.table === 'nat' && x.value > 0));
  assert.ok(s.nftSetElements?.some((x) => x.labels.table === 'ip kube-proxy' && x.labels.map === 'service-ips'));
  assert.equal(s.conntrackFill?.[0]?.value, 4537 / 262144);
  assert.equal(s.bpfFill?.length, 1);
  assert.ok((s.bpfFill?.[0]?.value ?? 0) > 0.8 && (s.bpfFill?.[0]?.value ?? 0) <= 0.85);
  assert.deepEqual(
    s.processCpuSeconds,
    [{ labels: { node: 'n1', process: 'kube-proxy' }, value: 0.36 }],
    '12 millicores for 30 s',
  );
  assert.deepEqual(
    s.processPids.map((p) => p.value),
    [1, 0],
  );
  assert.equal(s.processRss.length, 1, 'no memory series for a process that is not running');
  for (const list of Object.values(s).filter(Array.isArray))
    for (const x of list as { labels: Record<string, string> }[])
      for (const k of Object.keys(x.labels)) assert.ok(['node', 'table', 'map', 'process'].includes(k), k);
});

test('a failed read leaves its section out (never zeros); the others still update', () => {
  const sample = { ...fixtureSample(), errors: ['conntrack: exited with 1', 'bpftool: not found'] };
  assert.deepEqual(failedSections(sample.errors), ['conntrack', 'bpf']);
  const s = dataplaneSeries('n1', sample, fixtureMaps());
  assert.equal(s.conntrackEntries, undefined);
  assert.equal(s.bpfMaxEntries, undefined);
  assert.ok(s.iptablesRules?.length);
});

test('gauges keep their last value over a failed read and drop series of maps that went away', async () => {
  const m = new AgentMetrics('n1');
  m.setDataplane(dataplaneSeries('n1', fixtureSample(), fixtureMaps()), 1000);
  const text1 = await m.registry.metrics();
  assert.match(text1, /cni_bench_conntrack_entries\{node="n1"\} 4537/);
  const mapCount = (t: string) => (t.match(/^cni_bench_bpf_map_max_entries\{/gm) ?? []).length;
  assert.ok(mapCount(text1) > 1);
  m.setDataplane(
    dataplaneSeries('n1', { ...fixtureSample(), errors: ['conntrack: timed out'] }, fixtureMaps().slice(0, 1)),
    2000,
  );
  const text2 = await m.registry.metrics();
  assert.match(text2, /cni_bench_conntrack_entries\{node="n1"\} 4537/, 'kept over the failed read');
  assert.match(text2, /cni_bench_dataplane_read_errors_total\{node="n1",source="conntrack"\} 1/);
  assert.equal(mapCount(text2), 1, 'maps that went away lost their series');
});

test('BPF maps are grouped by name; only prefixed maps (bounded) and never the LB map are dumped', () => {
  const maps = parseBpftoolMapShow(fixture('bpftool-map-show.json'));
  const grouped = groupBpfMaps([...maps, { ...maps[0]!, id: 9999 }], new Map());
  const g = grouped.find((x) => x.name === (maps[0]!.name || `id-${maps[0]!.id}`));
  assert.equal(g?.maps, 2);
  assert.equal(g?.maxEntries, maps[0]!.maxEntries * 2);
  assert.equal(g?.entries, undefined, 'not counted');
  const many = Array.from({ length: 20 }, (_, i) => ({
    id: i,
    name: `cnib_${i}`,
    type: 'hash',
    maxEntries: 10,
    bytesMemlock: 0,
  }));
  assert.equal(mapsToCount(many, ['cnib_']).length, MAX_COUNTED_MAPS);
  assert.deepEqual(
    mapsToCount([{ id: 1, name: 'cilium_lb4_serv', type: 'hash', maxEntries: 10, bytesMemlock: 0 }], ['cilium_']),
    [],
  );
});

test('conntrack drops: the counter grows by what the kernel count grew, from 0 at the first read, and never goes back', async () => {
  const m = new AgentMetrics('n1');
  const drops = async () =>
    Number(/^cni_bench_conntrack_drops_total\{node="n1"\} (\d+)$/m.exec(await m.registry.metrics())?.[1]);
  m.conntrackDropsSeen(parseNfConntrackStat(fixture('proc-net-stat-nf-conntrack.txt')).drop);
  assert.equal(await drops(), 0);
  const full = parseNfConntrackStat(fixture('proc-net-stat-nf-conntrack-full.txt'));
  m.conntrackDropsSeen(full.drop + full.earlyDrop);
  assert.equal(await drops(), 12);
  m.conntrackDropsSeen(5); // a smaller kernel count (another namespace, a reload): a new base, no decrease
  m.conntrackDropsSeen(8);
  assert.equal(await drops(), 15);
});
