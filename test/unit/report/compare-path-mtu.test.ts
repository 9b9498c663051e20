/**
 * The path MTU per path side by side (report/compare-path-mtu.ts), through a
 * comparison (Markdown, JSON, HTML) and a study: the overlay's narrower pod-to-pod path beside the
 * native one, a black hole flagged in its run's column, a path one run did not
 * measure, and the narrowest of several targets. Hand-built rows with the
 * values the labs read (docs/pmtu.md: Cilium VXLAN pod-to-pod 1450 against an
 * interface of 1500, the iptables lab 1500 everywhere).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterDescription } from '../../../core/cluster.js';
import type { PathMtu } from '../../../gen/cnibench/v1/agent.js';
import { compareReports } from '../../../report/compare.js';
import { comparePathMtus, pathMtuHtmlRows, renderPathMtuComparison } from '../../../report/compare-path-mtu.js';
import { renderComparisonMarkdown } from '../../../report/compare-render.js';
import { renderComparisonHtml } from '../../../report/html-compare.js';
import type { ReportModel, ReportRow } from '../../../report/report.js';
import { buildStudy } from '../../../report/study.js';
import { renderStudyMarkdown } from '../../../report/study-render.js';
import { pathMtuReading, reportRow } from '../../support/helpers/report-rows.js';

const mtu = pathMtuReading;
const row = (id: string, path: string, pathMtu?: PathMtu): ReportRow =>
  reportRow({ id, measurement: `${id} ${path}`, path, ...(pathMtu ? { pathMtu } : {}) });
const desc = (cni: string, cniMode: string): ClusterDescription => ({
  kubernetesVersion: 'lab',
  cni,
  cniMode,
  kubeProxyMode: 'iptables',
  kernel: '6.18.0',
  nodeType: '1 CPU',
});
const model = (id: string, d: ClusterDescription, rows: ReportRow[]): ReportModel => ({
  run: { id, name: id, state: 'succeeded', reason: '', createdMs: 1, startedMs: 2, endedMs: 3 },
  cluster: { description: d },
  rows,
});

const IPTABLES = model('a', desc('lab bridge', ''), [
  row('tput', 'pod-to-pod', mtu({})),
  row('tput-svc', 'service', mtu({ target: '198.18.16.11' })),
  row('tput-host', 'host-to-host', mtu({ target: '198.18.0.2' })),
]);
const VXLAN = model('b', desc('cilium', 'vxlan tunnel'), [
  row('tput', 'pod-to-pod', mtu({ effectiveMtu: 1450, announcedMtu: 1450 })),
  row('tput-svc', 'service', mtu({ target: '198.18.16.11', effectiveMtu: 1450, announcedMtu: 1450 })),
  row('tput-host', 'host-to-host', mtu({ target: '198.18.0.2' })),
]);

test('per path, one cell per run; the overlay path is marked as differing, the host path is not', () => {
  const rows = comparePathMtus([IPTABLES, VXLAN]);
  assert.deepEqual(
    rows.map((r) => [r.path, r.cells.map((c) => c?.pathMtu), r.differs]),
    [
      ['pod-to-pod', [1500, 1450], true],
      ['service', [1500, 1450], true],
      ['host-to-host', [1500, 1500], false],
    ],
  );
  assert.deepEqual(comparePathMtus([model('x', desc('a', ''), [row('t', 'pod-to-pod')])]), [], 'nothing measured');
});

test('a black hole, an unmeasured path, a path a run lacks, and the narrowest of two targets', () => {
  const holed = model('c', desc('cilium', 'vxlan tunnel'), [
    row('tput', 'pod-to-pod', mtu({ effectiveMtu: 1400, blackHole: true })),
    row('tput-svc', 'service', mtu({ effectiveMtu: 0, localMtu: 0, error: 'no reply even at 576 bytes' })),
    row('tput-2', 'host-to-host', mtu({ target: '198.18.0.2' })),
    row('tput-3', 'host-to-host', mtu({ target: '198.18.0.3', effectiveMtu: 1480 })),
  ]);
  const short = model('d', desc('lab bridge', ''), [row('tput', 'pod-to-pod', mtu({}))]);
  const rows = comparePathMtus([short, holed]);
  const text = renderPathMtuComparison(['iptables', 'holed'], rows).join('\n');
  assert.match(text, /^## Path MTU per path$/m);
  assert.match(text, /^\| pod-to-pod ⚠ differs \| 1500 \| \*\*black hole\*\* above 1400 \(interface 1500\) \|$/m);
  assert.match(text, /^\| service \| — \| not measured: no reply even at 576 bytes \|$/m);
  assert.match(text, /^\| host-to-host \| — \| 1480 \(interface 1500\) \(narrowest of 2 targets\) \|$/m);
  assert.deepEqual(pathMtuHtmlRows(rows)[0], [
    'pod-to-pod ⚠ differs',
    '1500',
    '<span class="bad">BLACK HOLE above 1400 (interface 1500)</span>',
  ]);
});

test('a comparison and the study show the section; its JSON carries the rows', () => {
  const table = compareReports([IPTABLES, VXLAN], { labels: ['iptables', 'cilium-vxlan'] });
  assert.equal(table.pathMtu?.length, 3);
  const md = renderComparisonMarkdown(table);
  assert.match(md, /^\| path \| iptables \| cilium-vxlan \|$/m);
  assert.match(md, /^\| pod-to-pod ⚠ differs \| 1500 \| 1450 \(interface 1500\) \|$/m);
  assert.match(md, /^\| host-to-host \| 1500 \| 1500 \|$/m);
  const html = renderComparisonHtml(table);
  assert.match(html, /<h2>Path MTU per path<\/h2>/);
  assert.match(html, /<td>pod-to-pod ⚠ differs<\/td><td>1500<\/td><td>1450 \(interface 1500\)<\/td>/);
  const study = renderStudyMarkdown(
    buildStudy(
      [
        { label: 'iptables', matrix: IPTABLES, seconds: 1 },
        { label: 'cilium-vxlan', matrix: VXLAN, seconds: 1 },
      ],
      {
        nodes: 2,
        durationSeconds: 1,
        warmupSeconds: 0,
        rounds: 1,
        steps: [0],
        endpointsPerService: 1,
        sweepDurationSeconds: 1,
        sweepRounds: 1,
      },
      2,
    ),
  );
  assert.match(study, /^### Path MTU per path$/m);
  assert.match(study, /^\| service ⚠ differs \| 1500 \| 1450 \(interface 1500\) \|$/m);
  // Runs without any path MTU (older reports): no section, no field.
  const plain = compareReports([model('e', desc('a', ''), []), model('f', desc('b', ''), [])]);
  assert.equal(plain.pathMtu, undefined);
  assert.doesNotMatch(renderComparisonMarkdown(plain), /Path MTU/);
});
