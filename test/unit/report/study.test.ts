/**
 * The study model as pure logic over hand-built report models: the matrix
 * side by side through compare.ts, each sweep against its own first step with
 * a verdict, the crossover and the failures named, and the Markdown sections.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterDescription } from '../../../core/cluster.js';
import type { Metric } from '../../../report/metrics-model.js';
import type { ReportModel, ReportRow } from '../../../report/report.js';
import { summarise } from '../../../report/stats.js';
import { buildStudy, type StudySettings, scaleVerdicts } from '../../../report/study.js';
import { renderStudyMarkdown } from '../../../report/study-render.js';
import type { SweepTable } from '../../../report/sweep.js';
import { reportRow } from '../../support/helpers/report-rows.js';

const rps = (perRound: number[]): Metric => ({
  name: 'rps',
  unit: 'req/s',
  higherIsBetter: true,
  value: summarise(perRound).median,
  perRound,
  summary: summarise(perRound),
  source: 'rounds-median',
});

const row = (id: string, measurement: string, perRound: number[]): ReportRow =>
  reportRow({
    id,
    measurement,
    toolVersion: '4.2.0',
    value: summarise(perRound).median,
    rounds: perRound.length,
    metrics: [rps(perRound)],
  });

const desc = (kubeProxyMode: string, cni: string, cniMode = ''): ClusterDescription => ({
  kubernetesVersion: 'v1.37.2',
  cni,
  cniMode,
  kubeProxyMode,
  kernel: '6.18.0',
  nodeType: '1 CPU',
});

const model = (id: string, d: ClusterDescription, rows: ReportRow[], sweep?: SweepTable): ReportModel => ({
  run: { id, name: id, state: 'succeeded', reason: '', createdMs: 1, startedMs: 2, endedMs: 3 },
  cluster: { description: d },
  rows,
  ...(sweep ? { sweep } : {}),
});

const step = (services: number) => ({
  services,
  programmingMs: 10,
  syncMs: 5,
  pollMs: 5,
  programmingLatencyMs: 15,
  latencyResolutionMs: 5,
  pollPauseMs: 200,
  kubeServicesRules: null,
  nftServiceIps: null,
  ciliumFrontends: null,
  status: 'succeeded',
});

const sweep = (first: number[], last: number[]): SweepTable => ({
  steps: [step(0), step(5000)],
  series: [
    {
      id: 'http-sc',
      label: 'HTTP short-connection c64 service',
      unit: 'req/s',
      values: [summarise(first).median, summarise(last).median],
      rounds: [first, last],
      change: [0, summarise(last).median / summarise(first).median - 1],
    },
  ],
});

const SETTINGS: StudySettings = {
  nodes: 2,
  durationSeconds: 2,
  warmupSeconds: 1,
  rounds: 3,
  steps: [0, 5000],
  endpointsPerService: 4,
  sweepDurationSeconds: 2,
  sweepRounds: 3,
};

test('each sweep against its own step 0: a clear fall is worse, a steady curve within noise', () => {
  const [fall] = scaleVerdicts('iptables', sweep([1000, 1010, 990], [500, 505, 495]));
  const [flat] = scaleVerdicts('cilium', sweep([800, 810, 790], [805, 795, 800]));
  assert.equal(fall?.verdict, 'worse');
  assert.equal(Math.round((fall?.relDiff ?? 0) * 100), -50);
  assert.ok(fall?.baselineCi95 && fall.lastCi95);
  assert.equal(flat?.verdict, 'within noise');
});

test('the study puts the dataplanes side by side, states the crossover, and names a dataplane that failed', () => {
  const ipt = model('a', desc('iptables', 'lab bridge'), [
    row('http-ka', 'HTTP keepalive c64 service', [100, 101, 99]),
  ]);
  const cil = model('b', desc('none (Cilium kube-proxy replacement)', 'cilium', 'vxlan tunnel'), [
    row('http-ka', 'HTTP keepalive c64 service', [80, 81, 79]),
  ]);
  const study = buildStudy(
    [
      {
        label: 'iptables (legacy)',
        matrix: ipt,
        sweep: model('c', ipt.cluster.description, [], sweep([1000, 1010, 990], [500, 505, 495])),
        seconds: 100,
      },
      {
        label: 'cilium-vxlan',
        matrix: cil,
        sweep: model('d', cil.cluster.description, [], sweep([800, 810, 790], [805, 795, 800])),
        seconds: 200,
      },
      { label: 'cilium', seconds: 5, error: 'cilium-agent did not become ready' },
    ],
    SETTINGS,
    305,
  );
  assert.equal(study.matrix?.rows[0]?.cells[1]?.vsBaseline?.verdict, 'worse');
  assert.equal(study.sweep?.series[0]?.crossovers[0]?.between?.join(), '0,5000');
  assert.equal(study.scaleVerdicts.length, 2);
  assert.deepEqual(
    study.dataplanes.map((d) => [d.label, d.matrixState, d.error]),
    [
      ['iptables (legacy)', 'succeeded', ''],
      ['cilium-vxlan', 'succeeded', ''],
      ['cilium', 'not run', 'cilium-agent did not become ready'],
    ],
  );
  assert.ok(study.headline.some((h) => /iptables \(legacy\): HTTP short-connection c64 service falls -50%/.test(h)));
  assert.ok(
    study.headline.some((h) => /cilium-vxlan overtakes iptables \(legacy\) between 0 and 5,000 Services/.test(h)),
  );
  assert.ok(study.headline.some((h) => /cilium-vxlan against iptables \(legacy\): 0 better, 1 worse/.test(h)));
  const md = renderStudyMarkdown(study);
  assert.match(md, /^# cni-bench study: iptables \(legacy\) vs cilium-vxlan vs cilium\n/);
  assert.match(md, /Wall time 5 min 5 s \(305 s\)/);
  assert.match(md, /\| cilium \| — \| not run \| not run \| 5 s \| cilium-agent did not become ready/);
  assert.match(md, /## Measurement matrix: iptables \(legacy\) vs cilium-vxlan\n/);
  assert.match(md, /## Service scale sweep: iptables \(legacy\) vs cilium-vxlan\n/);
  assert.match(md, /### Programming latency/);
  assert.match(
    md,
    /\| iptables \(legacy\) \| HTTP short-connection c64 service \(req\/s\) \| 1,000 \| .* \| -50\.0% \| worse/,
  );
  assert.match(md, /## What a longer run adds/);
});

test('one dataplane alone: no matrix comparison, its sweep still reported', () => {
  const ipt = model('a', desc('iptables', 'lab bridge'), [
    row('http-ka', 'HTTP keepalive c64 service', [100, 101, 99]),
  ]);
  const study = buildStudy(
    [
      {
        label: 'iptables',
        matrix: ipt,
        sweep: model('c', ipt.cluster.description, [], sweep([1, 2, 3], [1, 2, 3])),
        seconds: 1,
      },
    ],
    SETTINGS,
    1,
  );
  assert.equal(study.matrix, null);
  assert.match(renderStudyMarkdown(study), /Fewer than two dataplanes ran their matrix/);
});
