/** Monitoring settings of the agent: defaults, environment names, flags over environment, errors naming the field. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AGENT_ENV, loadAgentConfig, monitorTimeoutMs } from '../../../agent/config.js';
import { monitorArgs } from '../../../lab/lab.js';
import { validationMessage } from '../../support/helpers/errors.js';

const base = ['--collector', 'unix:/run/x.sock'];

test('monitoring is off by default; defaults are 30 s, 10 peers, 10% jitter, port 8478, host probes on', () => {
  const c = loadAgentConfig(base, {});
  assert.deepEqual(
    [
      c.monitor,
      c.monitorIntervalS,
      c.monitorPeers,
      c.monitorJitter,
      c.monitorPort,
      c.monitorHostProbes,
      c.monitorBpfMaps,
      monitorTimeoutMs(c),
    ],
    [false, 30, 10, 0.1, 8478, true, [], 3000],
  );
  assert.equal(
    monitorTimeoutMs({ monitorTimeoutMs: 0, monitorIntervalS: 2 }),
    600,
    'automatic timeout: 30% of a short interval',
  );
});

test('environment sets monitoring, flags win over it', () => {
  const env = {
    [AGENT_ENV.monitor]: 'true',
    [AGENT_ENV.monitorIntervalS]: '15',
    [AGENT_ENV.monitorPeers]: '4',
    [AGENT_ENV.monitorHostProbes]: 'false',
    [AGENT_ENV.monitorBpfMaps]: 'cilium_lb4_back, cnib_',
  };
  const c = loadAgentConfig(base, env);
  assert.deepEqual(
    [c.monitor, c.monitorIntervalS, c.monitorPeers, c.monitorHostProbes, c.monitorBpfMaps],
    [true, 15, 4, false, ['cilium_lb4_back', 'cnib_']],
  );
  const f = loadAgentConfig(
    [...base, '--monitor-peers', '7', '--monitor-interval-s', '2', '--monitor-timeout-ms', '500'],
    env,
  );
  assert.deepEqual([f.monitorPeers, f.monitorIntervalS, monitorTimeoutMs(f)], [7, 2, 500]);
  assert.equal(loadAgentConfig([...base, '--monitor'], {}).monitor, true);
});

test('bad monitoring settings name the field', () => {
  assert.match(
    validationMessage(() => loadAgentConfig([...base, '--monitor-peers', '0'], {})),
    /monitorPeers/,
  );
  assert.match(
    validationMessage(() => loadAgentConfig([...base, '--monitor-interval-s', '0.1'], {})),
    /monitorIntervalS/,
  );
  assert.match(
    validationMessage(() => loadAgentConfig([...base, '--monitor-jitter', '0.9'], {})),
    /monitorJitter/,
  );
  assert.match(
    validationMessage(() =>
      loadAgentConfig([...base, '--monitor-interval-s', '2', '--monitor-timeout-ms', '1500'], {}),
    ),
    /monitorTimeoutMs: must be at most 30% of monitorIntervalS/,
  );
  assert.match(
    validationMessage(() => loadAgentConfig([...base, '--monitor', '--monitor-port', '8477'], {})),
    /monitorPort: must differ from healthPort/,
  );
  assert.match(
    validationMessage(() => loadAgentConfig(base, { [AGENT_ENV.monitor]: 'yes' })),
    /monitor/,
  );
});

test('the lab passes monitoring settings as agent flags the agent accepts', () => {
  const args = monitorArgs({ intervalS: 2, peers: 3, timeoutMs: 500, bpfMaps: ['cnib_x'] });
  assert.deepEqual(args, [
    '--monitor',
    '--monitor-interval-s',
    '2',
    '--monitor-peers',
    '3',
    '--monitor-timeout-ms',
    '500',
    '--monitor-bpf-maps',
    'cnib_x',
  ]);
  const c = loadAgentConfig([...base, ...args], {});
  assert.deepEqual(
    [c.monitor, c.monitorIntervalS, c.monitorPeers, c.monitorTimeoutMs, c.monitorBpfMaps],
    [true, 2, 3, 500, ['cnib_x']],
  );
});
