import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatPipeAddress, parsePipeAddress } from '../../../../lab/k8s/pipe.js';

test('a forwarder address is a unix socket path (it has a slash) or host:port', () => {
  assert.deepEqual(parsePipeAddress('/run/lab/apiserver.sock'), { path: '/run/lab/apiserver.sock' });
  assert.deepEqual(parsePipeAddress('198.18.0.254:6443'), { host: '198.18.0.254', port: 6443 });
  assert.deepEqual(parsePipeAddress('127.0.0.1:6443'), { host: '127.0.0.1', port: 6443 });
  for (const bad of [
    undefined,
    '',
    '6443',
    ':6443',
    '127.0.0.1',
    '127.0.0.1:',
    '127.0.0.1:0',
    '127.0.0.1:65536',
    'h:x',
  ])
    assert.equal(parsePipeAddress(bad), undefined, String(bad));
  assert.equal(formatPipeAddress({ host: '198.18.0.254', port: 6443 }), '198.18.0.254:6443');
  assert.equal(formatPipeAddress({ path: '/s.sock' }), '/s.sock');
});
