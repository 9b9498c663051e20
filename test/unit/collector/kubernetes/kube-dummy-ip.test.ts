/**
 * A sweep's dummy Services at requested ClusterIPs (the lab's frontend asks
 * for them: kube-apiserver 1.37 allocates dynamic ones one at a time), and the
 * refusal that sends one back to dynamic allocation.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import { isAddressTaken } from '../../../../collector/kubernetes/frontend.js';
import { dummyPair } from '../../../../collector/kubernetes/objects.js';
import { CniBenchError, ErrorCodes } from '../../../../core/errors.js';
import { dummyClusterIp, dummyService } from '../../../../lab/dummy-services.js';

test('a dummy asks for its ClusterIP only when given one', () => {
  assert.equal(dummyPair('sweep', 5, 4, 'r').service.spec?.clusterIP, undefined);
  assert.equal(dummyPair('sweep', 5, 4, 'r', '198.19.128.5').service.spec?.clusterIP, '198.19.128.5');
});

test("the lab's dummy ClusterIPs are the iptables lab's, distinct, in the upper half of 198.19.0.0/16", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 32_000; i++) {
    const ip = dummyClusterIp(i);
    assert.equal(ip, dummyService(i, 1).clusterIp);
    const [a, b, c, d] = ip.split('.').map(Number);
    assert.ok(a === 198 && b === 19 && (c as number) >= 128 && (c as number) <= 255 && (d as number) <= 255, ip);
    seen.add(ip);
  }
  assert.equal(seen.size, 32_000);
});

/** As @kubernetes/client-node throws it, with the Status body whose message kube-apiserver 1.37 writes (pkg/registry/core/service/storage/alloc.go). */
function refused(code: number, message: string): CniBenchError {
  const body = JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message,
    reason: 'Invalid',
    code,
  });
  const cause = new ApiException(code, 'Unprocessable Entity', body, {});
  return new CniBenchError(ErrorCodes.KUBERNETES, `create service: HTTP ${code}`, { cause });
}

test('only "provided IP is already allocated" (422) falls back to a dynamic ClusterIP', () => {
  const taken =
    'Service "cni-bench-dummy-5" is invalid: spec.clusterIPs: Invalid value: ["198.19.128.5"]: failed to allocate IP 198.19.128.5: provided IP is already allocated';
  assert.equal(isAddressTaken(refused(422, taken)), true);
  const outside =
    'Service "cni-bench-dummy-5" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.5"]: failed to allocate IP 10.0.0.5: the provided network does not match the current range';
  assert.equal(isAddressTaken(refused(422, outside)), false);
  assert.equal(isAddressTaken(refused(409, 'services "cni-bench-dummy-5" already exists')), false);
  assert.equal(isAddressTaken(new Error('socket hang up')), false);
});
