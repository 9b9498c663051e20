import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phasesOf } from '../../../../collector/runs/phases.js';
import { parseScenario } from '../../../../collector/runs/scenario.js';
import { validationMessage } from '../../../support/helpers/errors.js';

const one = [{ kind: 'rr', path: 'pod-to-pod', mode: 'crr' }];

test('a condition repeats every measurement after the baseline, between an apply and a revert phase', () => {
  const s = parseScenario({ measurements: one, conditions: { networkPolicy: {} } });
  const p = phasesOf(s);
  assert.deepEqual(
    p.map((x) => x.name),
    [
      'TCP_CRR pod-to-pod',
      'TCP_CRR pod-to-pod [baseline before networkPolicy]',
      'apply networkPolicy x1',
      'TCP_CRR pod-to-pod [networkPolicy x1]',
      'revert networkPolicy',
    ],
  );
  assert.equal(p[1]?.kind === 'measure' && p[1].condition?.baseline, true);
  assert.equal(p[2]?.kind, 'condition');
  assert.equal(p[3]?.kind === 'measure' && p[3].condition?.group, 'networkPolicy');
  assert.equal(p[3]?.kind === 'measure' && p[3].condition?.baseline, undefined);
});

test('policyCount defaults to 0, 100, 500, 1000 policies, each step applied before its measurements, one revert', () => {
  const s = parseScenario({ measurements: one, conditions: { policyCount: {} } });
  const names = phasesOf(s).map((x) => x.name);
  assert.deepEqual(names, [
    'TCP_CRR pod-to-pod',
    'TCP_CRR pod-to-pod [baseline before policyCount]',
    'apply 0 policies',
    'TCP_CRR pod-to-pod [0 policies]',
    'apply 100 policies',
    'TCP_CRR pod-to-pod [100 policies]',
    'apply 500 policies',
    'TCP_CRR pod-to-pod [500 policies]',
    'apply 1,000 policies',
    'TCP_CRR pod-to-pod [1,000 policies]',
    'revert policyCount',
  ]);
});

test('bad conditions name the field', () => {
  assert.match(
    validationMessage(() => parseScenario({ conditions: { policyCount: { steps: [100, 0] } } })),
    /conditions\.policyCount\.steps/,
  );
  assert.match(
    validationMessage(() => parseScenario({ conditions: { tls: {} } })),
    /conditions/,
  );
  assert.match(
    validationMessage(() => parseScenario({ conditions: { networkPolicy: { policies: 0 } } })),
    /conditions\.networkPolicy\.policies/,
  );
});
