import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadAgentConfig } from '../../agent/config.js';
import { loadCollectorConfig } from '../../collector/config.js';

test('agent flags win over environment, defaults fill the rest, and the result is frozen', () => {
  const c = loadAgentConfig(['--collector', 'unix:/run/x.sock', '--label', 'zone=a'], { CNI_BENCH_COLLECTOR: 'ignored:1', NODE_NAME: 'n1', POD_IP: '198.18.16.10' });
  assert.equal(c.collector, 'unix:/run/x.sock');
  assert.equal(c.nodeName, 'n1');
  assert.equal(c.podIp, '198.18.16.10');
  assert.equal(c.healthPort, 8477);
  assert.deepEqual(c.labels, { zone: 'a' });
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.labels));
});

test('bad agent config names the field', () => {
  assert.throws(() => loadAgentConfig([], {}), /invalid agent config: collector/);
  assert.throws(() => loadAgentConfig(['--collector', 'x:1', '--health-port', '70000'], {}), /healthPort/);
  assert.throws(() => loadAgentConfig(['--collector', 'x:1', '--label', 'nokey'], {}), /labels: 'nokey' is not key=value/);
  assert.throws(() => loadAgentConfig(['--bogus'], {}), /bogus/);
});

test('collector config from environment, with field names in errors', () => {
  const c = loadCollectorConfig([], { CNI_BENCH_HTTP_PORT: '0', CNI_BENCH_DB: ':memory:' });
  assert.equal(c.httpPort, 0);
  assert.equal(c.grpcListen, '0.0.0.0:7070');
  assert.throws(() => loadCollectorConfig(['--liveness-timeout-ms', '10'], {}), /livenessTimeoutMs/);
});
