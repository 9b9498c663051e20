/**
 * `cni-bench lab study` end to end with short durations: kube-proxy iptables
 * and real Cilium with its VXLAN tunnel, each in its own fresh lab, each
 * running a small measurement matrix (from --scenario) and then a two-step
 * Service sweep; one
 * report puts every measurement of both side by side with an interval and a
 * verdict, the sweep curves with where they cross, each step's programming
 * latency, and the wall time. Nothing of either lab is left.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { StudyModel } from '../../report/study.js';
import { renderStudyMarkdown } from '../../report/study-render.js';
import { ciliumLeftovers, NOTHING_LEFT } from '../support/helpers/cilium-state.js';
import { addedRootLinks, rootLinks } from '../support/helpers/host-state.js';
import { CLI_MAIN, startNode } from '../support/helpers/procs.js';
import { notLong } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-study-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const VERDICTS = new Set(['better', 'worse', 'within noise', 'noise unknown', 'not compared']);

test('lab study: iptables and cilium-vxlan, matrix and sweep each, one report side by side with verdicts and the crossover', {
  skip: notLong,
  // About 10 minutes on a quiet machine; allow for 2 cores shared with other labs.
  timeout: 2_400_000,
}, async () => {
  const links = rootLinks();
  // A small matrix (the study's default has 26 measurements): one of each kind the study's table reports.
  const scenario = join(tmp, 'matrix.json');
  writeFileSync(
    scenario,
    JSON.stringify({
      measurements: [
        { kind: 'throughput', path: 'pod-to-pod', streams: 8 },
        { kind: 'http', path: 'service', mode: 'keepalive', connections: 64 },
        { kind: 'http', path: 'service', mode: 'short-connection', connections: 64 },
        { kind: 'rr', path: 'pod-to-pod', mode: 'rr' },
      ],
    }),
  );
  const p = startNode(
    CLI_MAIN,
    [
      'lab',
      'study',
      '--dataplanes',
      'iptables,cilium-vxlan',
      '--duration',
      '1',
      '--warmup',
      '0.5',
      '--rounds',
      '2',
      '--scenario',
      scenario,
      '--steps',
      '0,1000',
      '--sweep-duration',
      '1',
      '--sweep-rounds',
      '3',
      '--json',
      '--db',
      join(tmp, 'lab.db'),
    ],
    { CNI_BENCH_LOG_LEVEL: 'info' },
  );
  const code = await p.exited;
  const ids = [
    ...new Set(
      [...p.output().matchAll(/"msg":"lab (?:created|destroyed)"[^\n]*"id":"([0-9a-f]+)"/g)].map((m) => m[1] as string),
    ),
  ];
  for (const id of ids) assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT, `lab ${id}`);
  assert.deepEqual(addedRootLinks(links), [], 'no root-namespace link left by this run');
  assert.equal(code, 0, p.output().slice(-6000));
  assert.equal([...p.output().matchAll(/"msg":"lab created"/g)].length, 2, 'one fresh lab per dataplane');
  const { study, runs } = JSON.parse(p.stdout()) as { study: StudyModel; runs: any[] };

  assert.deepEqual(
    study.dataplanes.map((d) => [d.label, d.matrixState, d.sweepState]),
    [
      ['iptables (legacy)', 'succeeded', 'succeeded'],
      ['cilium-vxlan', 'succeeded', 'succeeded'],
    ],
  );
  // What the collector detected in each lab, not what the command was told.
  assert.match(study.dataplanes[0]?.cluster ?? '', /iptables/);
  assert.match(study.dataplanes[1]?.cluster ?? '', /cilium [0-9.]* ?vxlan tunnel/);
  assert.match(runs[1].matrix.cluster.description.cni, /^cilium\b/);
  assert.ok(study.wallSeconds > 0);

  // The matrix: every measurement of the default matrix, both dataplanes side by side, each with a verdict.
  const matrix = study.matrix;
  assert.ok(matrix);
  assert.deepEqual(
    matrix.runs.map((r) => r.label),
    ['iptables (legacy)', 'cilium-vxlan'],
  );
  assert.deepEqual(
    [...new Set(matrix.rows.map((r) => r.measurementId))],
    ['tput-pod-to-pod-p8', 'http-ka-service-c64', 'http-sc-service-c64', 'rr-pod-to-pod'],
  );
  assert.ok(matrix.rows.length >= runs[0].matrix.rows.length, 'a row per measurement and metric');
  const compared = matrix.rows.filter((r) => r.cells.every((c) => c.value !== null));
  assert.ok(compared.length >= runs[0].matrix.rows.length, `${compared.length} rows with values on both sides`);
  for (const r of matrix.rows) {
    assert.equal(r.cells.length, 2);
    assert.ok(VERDICTS.has(r.cells[1]?.vsBaseline?.verdict ?? ''), `${r.label}: ${JSON.stringify(r.cells[1])}`);
  }
  for (const r of compared)
    assert.ok(
      r.cells.every((c) => c.ci95 !== null || c.n < 2),
      `${r.label}: an interval`,
    );

  // The sweep: both curves on the same steps, the crossover stated, programming latency for both.
  const sweep = study.sweep;
  assert.ok(sweep);
  assert.deepEqual(sweep.steps, [0, 1000]);
  assert.equal(sweep.series.length, 3);
  for (const s of sweep.series) assert.match(s.crossovers[0]?.text ?? '', /overtakes|is ahead of|within noise/);
  for (const l of sweep.latency)
    assert.ok(
      l.latencyMs.every((v) => v !== null && v > 0),
      JSON.stringify(l),
    );
  assert.equal(study.scaleVerdicts.length, 2 * 3);
  assert.ok(study.headline.some((h) => /short-connection/.test(h)));

  const md = renderStudyMarkdown(study);
  for (const heading of [
    '# cni-bench study: iptables (legacy) vs cilium-vxlan',
    '## Headline',
    '## Measurement matrix: iptables (legacy) vs cilium-vxlan',
    '## Service scale sweep',
    '### Programming latency',
    '## Each dataplane against its own first step',
    '## What a longer run adds',
  ])
    assert.ok(md.includes(heading), `${heading}\n${md}`);
  assert.match(md, /Wall time \d+ min/);
});
