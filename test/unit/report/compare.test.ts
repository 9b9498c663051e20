import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compareCommand } from '../../../cli/compare-command.js';
import { Store } from '../../../collector/store/store.js';
import type { ClusterDescription } from '../../../core/cluster.js';
import { isCniBenchError } from '../../../core/errors.js';
import { type ComparisonTable, compareReports, parseCompareQuery } from '../../../report/compare.js';
import {
  csvField,
  renderComparisonCsv,
  renderComparisonJson,
  renderComparisonMarkdown,
} from '../../../report/compare-render.js';
import type { Metric, MetricName } from '../../../report/metrics-model.js';
import type { ReportModel, ReportRow } from '../../../report/report.js';
import { summarise } from '../../../report/stats.js';
import { validationMessage } from '../../support/helpers/errors.js';
import { reportRow } from '../../support/helpers/report-rows.js';

// Report models built by hand: compare.ts is pure logic over them.

function metric(
  name: MetricName,
  perRound: number[],
  higherIsBetter = name === 'rps' || name === 'throughput',
): Metric {
  const sorted = [...perRound].sort((a, b) => a - b);
  const value = sorted.length ? summarise(sorted).median : NaN;
  return {
    name,
    unit: name.startsWith('p') ? 'us' : 'req/s',
    higherIsBetter,
    value,
    perRound,
    summary: perRound.length ? summarise(perRound) : null,
    source: 'rounds-median',
  };
}

function row(
  id: string,
  measurement: string,
  metrics: Metric[],
  extra: Partial<ReportRow> & { step?: number } = {},
): ReportRow {
  return reportRow({
    id,
    measurement,
    toolVersion: '4.2.0',
    value: metrics[0]?.value ?? null,
    unit: metrics[0]?.unit ?? '',
    rounds: metrics[0]?.perRound.length ?? 0,
    metrics,
    ...extra,
  });
}

const LAB: ClusterDescription = {
  kubernetesVersion: 'lab',
  cni: 'lab bridge',
  cniMode: '',
  kubeProxyMode: 'iptables',
  kernel: '6.18.0-12-generic',
  nodeType: '8 CPUs',
};

function report(id: string, rows: ReportRow[], description: ClusterDescription = LAB): ReportModel {
  return {
    run: { id, name: `run ${id}`, state: 'succeeded', reason: '', createdMs: 1, startedMs: 2, endedMs: 3 },
    cluster: { description },
    rows,
  };
}

const KA = 'HTTP keepalive c64 service (wrk)';

test('identical rounds are within noise', () => {
  const a = report('a', [row('http-ka-service-c64', KA, [metric('rps', [100, 101, 99])])]);
  const b = report('b', [row('http-ka-service-c64', KA, [metric('rps', [100, 101, 99])])]);
  const t = compareReports([a, b], { labels: ['A', 'B'] });
  assert.equal(t.rows.length, 1);
  assert.equal(t.rows[0]?.label, 'HTTP keepalive c64 service — rps');
  assert.equal(t.rows[0]?.cells[0]?.vsBaseline, null);
  assert.equal(t.rows[0]?.cells[1]?.vsBaseline?.verdict, 'within noise');
  assert.equal(t.rows[0]?.cells[1]?.vsBaseline?.relDiff, 0);
  assert.match(renderComparisonMarkdown(t), /within noise \(/);
});

test('clearly different rounds: the sign follows the change, the verdict follows higher- or lower-is-better', () => {
  const a = report('a', [row('m', KA, [metric('rps', [100, 101, 99]), metric('p99', [100, 101, 99])])]);
  const b = report('b', [row('m', KA, [metric('rps', [150, 149, 151]), metric('p99', [150, 149, 151])])]);
  const t = compareReports([a, b], { labels: ['base', 'run-b'] });
  const [rps, p99] = t.rows;
  assert.equal(rps?.metric, 'rps');
  assert.equal(rps?.cells[1]?.vsBaseline?.verdict, 'better');
  assert.ok((rps?.cells[1]?.vsBaseline?.relDiff ?? 0) > 0.49);
  assert.equal(p99?.metric, 'p99');
  assert.equal(p99?.higherIsBetter, false);
  assert.equal(p99?.cells[1]?.vsBaseline?.verdict, 'worse');
  // Reversed, the same numbers make the latency better and the rate worse.
  const back = compareReports([b, a], { labels: ['run-b', 'base'] });
  assert.equal(back.rows[0]?.cells[1]?.vsBaseline?.verdict, 'worse');
  assert.ok((back.rows[0]?.cells[1]?.vsBaseline?.relDiff ?? 0) < 0);
  assert.equal(back.rows[1]?.cells[1]?.vsBaseline?.verdict, 'better');
  const text = renderComparisonMarkdown(t);
  assert.match(text, /run-b better \(\+50\.0%, p=/);
  assert.match(text, /run-b worse \(\+50\.0%, p=/);
  assert.match(text, /\| Δ vs base \|/);
});

test('one round each: noise unknown', () => {
  const a = report('a', [row('m', KA, [metric('rps', [100])])]);
  const b = report('b', [row('m', KA, [metric('rps', [102])])]);
  const t = compareReports([a, b]);
  const v = t.rows[0]?.cells[1]?.vsBaseline;
  assert.equal(v?.verdict, 'noise unknown');
  assert.equal(v?.pValue, null);
  assert.equal(t.rows[0]?.cells[1]?.ci95, null);
  assert.match(renderComparisonMarkdown(t), /noise unknown \(single round/);
});

test('a measurement missing in one run gives a null cell and no verdict; a failed one says so', () => {
  const tput = row('tput-pod-to-pod-p8', 'iperf3 pod-to-pod TCP 8 streams', [metric('throughput', [10, 10.2, 9.9])], {
    tool: 'iperf3',
  });
  const a = report('a', [row('m', KA, [metric('rps', [100, 101, 99])]), tput]);
  const b = report('b', [
    row('m', KA, [], { status: 'failed', error: 'wrk: E_TIMEOUT' }),
    row('new', 'HTTP short-connection c64 service (wrk)', [metric('rps', [5, 6, 5])]),
  ]);
  const t = compareReports([a, b]);
  assert.deepEqual(
    t.rows.map((r) => r.key),
    ['m/rps', 'tput-pod-to-pod-p8/throughput', 'new/rps'],
  );
  const [failed, missing, added] = t.rows;
  assert.equal(failed?.cells[1]?.value, null);
  assert.equal(failed?.cells[1]?.status, 'failed');
  assert.equal(failed?.cells[1]?.vsBaseline?.verdict, 'not compared');
  assert.equal(missing?.cells[1]?.value, null);
  assert.equal(missing?.cells[1]?.status, 'missing');
  assert.equal(added?.cells[0]?.value, null);
  assert.equal(added?.cells[1]?.value, 5);
  assert.match(added?.cells[1]?.vsBaseline?.reason ?? '', /has no such measurement/);
  const text = renderComparisonMarkdown(t);
  assert.match(text, /— \(failed\)/);
  assert.match(text, /wrk: E_TIMEOUT/);
});

test('column labels come from the cluster description, told apart by run id when equal', () => {
  const r = (id: string, d: ClusterDescription) => report(id, [row('m', KA, [metric('rps', [1, 2])])], d);
  const t = compareReports([r('a', LAB), r('b', { ...LAB, kubeProxyMode: 'nftables' }), r('c', LAB)]);
  assert.deepEqual(
    t.runs.map((x) => x.label),
    ['iptables · lab bridge · 6.18 (a)', 'nftables · lab bridge · 6.18', 'iptables · lab bridge · 6.18 (c)'],
  );
  assert.equal(t.baseline, t.runs[0]?.label);
});

test('CSV quotes a label with a comma and a quote (RFC 4180), one line per row and run', () => {
  assert.equal(csvField('plain'), 'plain');
  assert.equal(csvField('a, "b"'), '"a, ""b"""');
  const a = report('a', [row('m', KA, [metric('rps', [100, 101, 99])])]);
  const b = report('b', [
    row('m', KA, [metric('rps', [150, 149, 151])], { warnings: [{ code: 'W_CPU', message: 'client CPU saturated' }] }),
  ]);
  const csv = renderComparisonCsv(compareReports([a, b], { labels: ['kube-proxy "iptables", lab', 'b'] }));
  const lines = csv.split('\r\n');
  assert.equal(lines[0], 'measurement,metric,unit,run,value,n,ci_low,ci_high,cv,rel_diff,verdict,warnings');
  assert.match(
    lines[1] ?? '',
    /^HTTP keepalive c64 service,rps,req\/s,"kube-proxy ""iptables"", lab",100,3,[\d.]+,[\d.]+,[\d.]+,,,$/,
  );
  assert.match(lines[2] ?? '', /^HTTP keepalive c64 service,rps,req\/s,b,150,3,.*,better,W_CPU$/);
  assert.equal(lines.length, 4);
  assert.equal(lines[3], '');
});

test('a sweep report with the same measurement id at two steps gives two rows', () => {
  const sweep = (id: string, at0: number[], at5k: number[]) =>
    report(id, [
      row('phase-0', 'program 0 Services', [], { tool: '' }),
      row('http-sc-service-c64', 'HTTP short-connection c64 service (wrk) @ 0 Services', [metric('rps', at0)], {
        step: 0,
      }),
      row('phase-2', 'program 5,000 Services', [], { tool: '' }),
      row('http-sc-service-c64', 'HTTP short-connection c64 service (wrk) @ 5,000 Services', [metric('rps', at5k)], {
        step: 5000,
      }),
    ]);
  const t = compareReports(
    [sweep('a', [13400, 13300, 13500], [5500, 5400, 5600]), sweep('b', [11500, 11400, 11600], [11900, 11800, 12000])],
    { labels: ['iptables', 'nftables'] },
  );
  assert.deepEqual(
    t.rows.map((r) => [r.key, r.step, r.label]),
    [
      ['http-sc-service-c64@0/rps', 0, 'HTTP short-connection c64 service @ 0 Services — rps'],
      ['http-sc-service-c64@5000/rps', 5000, 'HTTP short-connection c64 service @ 5,000 Services — rps'],
    ],
  );
  assert.equal(t.rows[0]?.cells[1]?.vsBaseline?.verdict, 'worse');
  assert.equal(t.rows[1]?.cells[1]?.vsBaseline?.verdict, 'better');
  // Without ReportRow.step (older reports) the phase name's step still tells the rows apart.
  const old = (r: ReportModel): ReportModel => ({
    ...r,
    rows: r.rows.map(({ step: _s, ...x }: ReportRow & { step?: number }) => x),
  });
  const t2 = compareReports([old(sweep('a', [1, 2], [3, 4])), old(sweep('b', [1, 2], [3, 4]))]);
  assert.deepEqual(
    t2.rows.map((r) => r.step),
    [0, 5000],
  );
});

test('warnings mark the value and are listed below the table; JSON keeps the documented shape', () => {
  const a = report('a', [
    row('m', KA, [metric('rps', [100, 101, 99])], {
      warnings: [{ code: 'W_TIME_WAIT', message: 'ephemeral ports | exhausted' }],
    }),
  ]);
  const b = report('b', [row('m', KA, [metric('rps', [100, 101, 99])])]);
  const t = compareReports([a, b], { labels: ['A', 'B'] });
  const text = renderComparisonMarkdown(t);
  assert.match(text, /\| ⚠ 100 ± [\d.]+ \| 100 ± /);
  assert.match(text, /- ⚠ A, HTTP keepalive c64 service: W_TIME_WAIT: ephemeral ports \\\| exhausted/);
  const json = JSON.parse(renderComparisonJson(t)) as ComparisonTable;
  assert.equal(json.schema, 'cni-bench.comparison/v1');
  assert.equal(json.noiseFloor, 0.03);
  assert.deepEqual(Object.keys(json.rows[0]?.cells[1] ?? {}), [
    'value',
    'n',
    'ci95',
    'cv',
    'status',
    'error',
    'warnings',
    'vsBaseline',
  ]);
  assert.deepEqual(json.rows[0]?.cells[0]?.warnings, ['W_TIME_WAIT']);
});

test('bad input names the field', () => {
  const a = report('a', [row('m', KA, [metric('rps', [1, 2])])]);
  assert.match(
    validationMessage(() => compareReports([a])),
    /^runs: /,
  );
  assert.match(
    validationMessage(() => compareReports([a, a], { labels: ['x'] })),
    /^labels: /,
  );
  assert.match(
    validationMessage(() => compareReports([a, a], { labels: ['x', 'x'] })),
    /^labels: /,
  );
  assert.match(
    validationMessage(() => compareReports([a, a], { noiseFloor: -1 })),
    /^noiseFloor: /,
  );
  assert.match(
    validationMessage(() => parseCompareQuery(new URLSearchParams('runs=a'))),
    /^runs: /,
  );
  assert.match(
    validationMessage(() => parseCompareQuery(new URLSearchParams('runs=a,b&format=pdf'))),
    /^format: /,
  );
  assert.match(
    validationMessage(() => parseCompareQuery(new URLSearchParams('runs=a,b&noiseFloor=x'))),
    /^noiseFloor: /,
  );
  assert.deepEqual(parseCompareQuery(new URLSearchParams('runs=a,b&format=csv&labels=x,y')), {
    runs: ['a', 'b'],
    format: 'csv',
    labels: ['x', 'y'],
  });
});

test('compareCommand compares two JSON report files and puts both in columns', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cnib-compare-'));
  try {
    const a = report('ra', [row('m', KA, [metric('rps', [100, 101, 99])])]);
    const b = report('rb', [row('m', KA, [metric('rps', [150, 149, 151])])], { ...LAB, kubeProxyMode: 'nftables' });
    await writeFile(join(dir, 'a.json'), JSON.stringify(a, null, 2));
    await writeFile(join(dir, 'b.json'), JSON.stringify(b, null, 2));
    let out = '';
    const io = { stdout: (s: string) => (out += s), dbPath: join(dir, 'none.db') };
    assert.equal(await compareCommand([join(dir, 'a.json'), join(dir, 'b.json')], io), 0);
    assert.match(
      out,
      /\| measurement \| unit \| iptables · lab bridge · 6\.18 \| nftables · lab bridge · 6\.18 \| Δ vs iptables · lab bridge · 6\.18 \| verdict \|/,
    );
    assert.match(out, /nftables · lab bridge · 6\.18 better \(\+50\.0%/);
    out = '';
    await compareCommand([join(dir, 'a.json'), join(dir, 'b.json'), '--format', 'csv', '--label', 'A,B'], io);
    assert.match(out, /,A,100,/);
    assert.match(out, /,B,150,.*,better,/);

    const rejects = async (args: string[], code: string, re: RegExp) =>
      assert.rejects(
        compareCommand(args, io),
        (e: unknown) => isCniBenchError(e) && e.code === code && re.test(e.message),
      );
    await rejects([join(dir, 'a.json'), 'r-unknown'], 'E_NOT_FOUND', /run 'r-unknown' not found/);
    await rejects([join(dir, 'a.json')], 'E_VALIDATION', /^runs: /);
    await rejects([join(dir, 'a.json'), join(dir, 'b.json'), '--format', 'pdf'], 'E_VALIDATION', /^--format: /);
    await rejects([join(dir, 'a.json'), join(dir, 'b.json'), '--label', 'x'], 'E_VALIDATION', /^--label: /);
    await rejects(
      [join(dir, 'a.json'), join(dir, 'b.json'), '--noise-floor', 'lots'],
      'E_VALIDATION',
      /^--noise-floor: /,
    );
    await rejects([join(dir, 'a.json'), join(dir, 'b.json'), '--bogus'], 'E_VALIDATION', /--bogus/);
    await writeFile(
      join(dir, 'bad.json'),
      JSON.stringify({ run: { id: 'x', name: '', state: 'succeeded' }, rows: [{ id: 'm' }] }),
    );
    await rejects([join(dir, 'a.json'), join(dir, 'bad.json')], 'E_VALIDATION', /bad\.json.*rows\[0\]\.measurement/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('compareCommand looks run ids up in the store and names an unknown one', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cnib-compare-'));
  const dbPath = join(dir, 'runs.db');
  try {
    const store = new Store(dbPath);
    for (const [id, kubeProxyMode] of [
      ['r-one', 'iptables'],
      ['r-two', 'nftables'],
    ] as const) {
      store.insertRun({
        id,
        state: 'succeeded',
        reason: '',
        createdMs: 1,
        startedMs: 2,
        endedMs: 3,
        scenario: { name: 'lab default' },
        cluster: { description: { ...LAB, kubeProxyMode } },
      });
    }
    store.close();
    let out = '';
    assert.equal(
      await compareCommand(['r-one', 'r-two', '--format', 'json'], { stdout: (s) => (out += s), dbPath }),
      0,
    );
    const t = JSON.parse(out) as ComparisonTable;
    assert.deepEqual(
      t.runs.map((r) => [r.id, r.label]),
      [
        ['r-one', 'iptables · lab bridge · 6.18'],
        ['r-two', 'nftables · lab bridge · 6.18'],
      ],
    );
    await assert.rejects(
      compareCommand(['r-one', 'r-three'], { stdout: () => {}, dbPath }),
      (e: unknown) => isCniBenchError(e, 'E_NOT_FOUND') && /run 'r-three' not found/.test(e.message),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
