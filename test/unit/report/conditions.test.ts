import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConditions } from '../../../report/conditions.js';
import { renderConditions } from '../../../report/conditions-render.js';
import type { PhaseRecord } from '../../../report/records.js';
import type { ReportRow } from '../../../report/report-row.js';
import { summarise } from '../../../report/stats.js';

function phase(
  index: number,
  name: string,
  detail: Record<string, unknown>,
  state = 'succeeded',
  error = '',
): PhaseRecord {
  return { runId: 'r', index, name, state, error, startedMs: 1, endedMs: 2, detail } as PhaseRecord;
}

function row(name: string, rounds: number[] | null, status = 'succeeded', error = ''): ReportRow {
  const metrics = rounds
    ? [
        {
          name: 'rps' as const,
          unit: 'req/s',
          higherIsBetter: true,
          value: [...rounds].sort((a, b) => a - b)[Math.floor(rounds.length / 2)] as number,
          perRound: rounds,
          summary: summarise(rounds),
          source: 'rounds-median' as const,
        },
      ]
    : [];
  return {
    id: 'm',
    measurement: name,
    path: 'pod-to-pod',
    tool: 'wrk',
    toolVersion: '',
    value: metrics[0]?.value ?? null,
    unit: 'req/s',
    status,
    error,
    details: {},
    dnatConnections: null,
    socketLbTranslated: null,
    warnings: [],
    rounds: rounds?.length ?? 0,
    metrics,
    dataplane: [],
  };
}

test('each measurement under a condition sits beside its baseline with the change and a verdict', () => {
  const m = { id: 'http-ka' };
  const np = { group: 'networkPolicy', label: 'networkPolicy x1', request: { kind: 'networkPolicy', policies: 1 } };
  const phases = [
    phase(0, 'HTTP', { measurement: m }),
    phase(1, 'apply networkPolicy x1', {
      condition: { action: 'apply', group: 'networkPolicy', request: np.request },
      evidence: { how: 'denied blocked', enforcementMs: 420, apiMs: 12, facts: {} },
    }),
    phase(2, 'HTTP [networkPolicy x1]', { measurement: m, condition: np }),
    phase(3, 'revert networkPolicy', { condition: { action: 'revert', group: 'networkPolicy', request: np.request } }),
  ];
  const rows = [
    row('HTTP', [1000, 1010, 990]),
    row('apply', null),
    row('HTTP [networkPolicy x1]', [800, 805, 795]),
    row('revert', null),
  ];
  const t = buildConditions(phases, rows);
  assert.ok(t);
  assert.equal(t.steps.length, 2);
  assert.equal(t.steps[0]?.enforcementMs, 420);
  const r = t.rows[0];
  assert.equal(r?.baseline, 1000);
  assert.equal(r?.value, 800);
  assert.ok(Math.abs((r?.change ?? 0) + 0.2) < 1e-9);
  assert.equal(r?.verdict, 'worse');
  const md = renderConditions(t).join('\n');
  assert.match(md, /\| HTTP \| networkPolicy x1 \| 1000 req\/s \| 800 req\/s \| -20\.0% \| worse/);
});

test('a condition that could not be verified shows its reason and no value', () => {
  const m = { id: 'http-ka' };
  const h = { group: 'hubble', label: 'hubble', request: { kind: 'hubble' } };
  const phases = [
    phase(0, 'HTTP', { measurement: m }),
    phase(
      1,
      'apply hubble',
      { condition: { action: 'apply', group: 'hubble', request: h.request } },
      'failed',
      'no flows',
    ),
    phase(2, 'HTTP [hubble]', { measurement: m, condition: h }, 'failed', "condition 'hubble' not verified: no flows"),
  ];
  const rows = [
    row('HTTP', [1000, 1010, 990]),
    row('apply', null, 'failed', 'no flows'),
    row('HTTP [hubble]', null, 'failed', "condition 'hubble' not verified: no flows"),
  ];
  const t = buildConditions(phases, rows);
  assert.equal(t?.steps[0]?.how, 'no flows');
  assert.equal(t?.rows[0]?.value, null);
  assert.equal(t?.rows[0]?.verdict, null);
  assert.match(t?.rows[0]?.error ?? '', /not verified: no flows/);
  assert.equal(buildConditions([phases[0] as PhaseRecord], [rows[0] as ReportRow]), undefined);
  assert.doesNotMatch(renderConditions(t as never).join('\n'), /0 policies step/);
});

test("a condition is compared with its group's adjacent baseline (measured right before it), not the run's first; the paired row is no row of its own", () => {
  const m = { id: 'http-ka' };
  const req = { kind: 'networkPolicy', policies: 1 };
  const np = { group: 'networkPolicy', label: 'networkPolicy x1', request: req };
  const phases = [
    phase(0, 'HTTP', { measurement: m }),
    phase(1, 'HTTP [baseline before networkPolicy]', {
      measurement: m,
      condition: { ...np, label: 'baseline before networkPolicy', baseline: true },
    }),
    phase(2, 'apply networkPolicy x1', { condition: { action: 'apply', group: 'networkPolicy', request: req } }),
    phase(3, 'HTTP [networkPolicy x1]', { measurement: m, condition: np }),
  ];
  const rows = [
    row('HTTP', [2000, 2010, 1990]),
    row('HTTP [baseline before networkPolicy]', [800, 810, 790]),
    row('apply', null),
    row('HTTP [networkPolicy x1]', [805, 800, 795]),
  ];
  const t = buildConditions(phases, rows);
  assert.equal(t?.rows.length, 1);
  const r = t?.rows[0];
  assert.equal(r?.baseline, 800);
  assert.equal(r?.baselineFrom, 'adjacent');
  assert.equal(r?.measurement, 'HTTP');
  assert.equal(r?.verdict, 'within noise');
  assert.deepEqual(r?.baselineCi95?.map(Math.round), [775, 825]);
  // Without it (it failed), the run's first baseline, and the row says so.
  const failed = [...rows];
  failed[1] = row('HTTP [baseline before networkPolicy]', null, 'failed', 'agent lost');
  assert.equal(buildConditions(phases, failed)?.rows[0]?.baselineFrom, 'run');
  assert.equal(buildConditions(phases, failed)?.rows[0]?.baseline, 2000);
});
