import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PathMtu } from '../../../gen/cnibench/v1/agent.js';
import { pathMtusOf, renderPathMtu } from '../../../report/path-mtu-render.js';
import type { ReportRow } from '../../../report/report-row.js';
import { pathMtuReading } from '../../support/helpers/report-rows.js';

const mtu = (p: Partial<PathMtu>): PathMtu => pathMtuReading({ target: '198.18.0.10', ...p });
const row = (path: string, pathMtu?: PathMtu): ReportRow =>
  ({ path, measurement: path, ...(pathMtu ? { pathMtu } : {}) }) as unknown as ReportRow;

test('one Path MTU line per path and target, the first row that measured it', () => {
  const rows = [
    row('pod-to-pod', mtu({ effectiveMtu: 1450, localMtu: 1450 })),
    row('pod-to-pod', mtu({ effectiveMtu: 1450, localMtu: 1450, probes: 3 })),
    row('service'),
    row('host', mtu({ target: '198.18.0.1' })),
  ];
  assert.deepEqual(
    pathMtusOf(rows).map((x) => [x.path, x.mtu.effectiveMtu, x.mtu.probes]),
    [
      ['pod-to-pod', 1450, 10],
      ['host', 1500, 10],
    ],
  );
  assert.deepEqual(renderPathMtu([row('service')]), [], 'no section when no row measured a path MTU');
});

test('a black hole is flagged, a narrowed path says who announced it, an unmeasured path says why', () => {
  const text = renderPathMtu([
    row('pod-to-pod', mtu({ effectiveMtu: 1400, blackHole: true })),
    row('host', mtu({ effectiveMtu: 1400, announcedMtu: 1400, announcedFrom: '198.18.0.1' })),
    row('pod-to-pod-vxlan', mtu({ effectiveMtu: 1450, announcedMtu: 1450 })),
    row('service', mtu({ target: '198.18.100.1', effectiveMtu: 0, localMtu: 0, error: 'no reply even at 576 bytes' })),
    row('pod-to-pod-same-node', mtu({})),
  ]).join('\n');
  assert.match(text, /^## Path MTU$/m);
  assert.match(text, /\| pod-to-pod \| 198\.18\.0\.10 \| 1400 \| 1500 \| \*\*PMTU black hole\*\*: packets above 1400/);
  assert.match(
    text,
    /\| host \| 198\.18\.0\.10 \| 1400 \| 1500 \| narrower than the interface: 1400 announced by 198\.18\.0\.1 \(ICMP fragmentation-needed\) \|/,
  );
  assert.match(
    text,
    /\| pod-to-pod-vxlan \| .* \| 1450 \| 1500 \| narrower than the interface: 1450 announced by the client's own kernel/,
  );
  assert.match(
    text,
    /\| service \| 198\.18\.100\.1 \(its backend\) \| — \| — \| not measured: no reply even at 576 bytes \|/,
  );
  assert.match(
    text,
    /\| pod-to-pod-same-node \| 198\.18\.0\.10 \| 1500 \| 1500 \| the interface MTU reaches the far end \|/,
  );
});
