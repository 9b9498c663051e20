/**
 * The decision on a TokenReview status (pure logic; the shape is what
 * authentication.k8s.io/v1 returns for a pod-bound projected token). The call
 * to a real API server is not exercised here: see the report of issue 20.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nodeOfReview } from '../../../../collector/auth/token-review.js';

const SA = 'cni-bench/cni-bench-agent';
const status = (over: Record<string, unknown> = {}) => ({
  authenticated: true,
  audiences: ['cni-bench'],
  user: {
    username: 'system:serviceaccount:cni-bench:cni-bench-agent',
    uid: 'u',
    groups: ['system:serviceaccounts', 'system:serviceaccounts:cni-bench', 'system:authenticated'],
    extra: {
      'authentication.kubernetes.io/credential-id': ['JTI=x'],
      'authentication.kubernetes.io/node-name': ['node-a'],
      'authentication.kubernetes.io/node-uid': ['n'],
      'authentication.kubernetes.io/pod-name': ['cni-bench-agent-x'],
      'authentication.kubernetes.io/pod-uid': ['p'],
    },
  },
  ...over,
});

test('a pod-bound token of the agents\u2019 ServiceAccount speaks for its pod\u2019s node', () => {
  assert.deepEqual(nodeOfReview(status(), SA), { node: 'node-a' });
});

test('anything else is refused with the reason', () => {
  assert.match(nodeOfReview({ authenticated: false }, SA).why ?? '', /not authenticated/);
  assert.match(nodeOfReview(undefined, SA).why ?? '', /not authenticated/);
  assert.match(nodeOfReview(status({ audiences: ['https://kubernetes.default.svc'] }), SA).why ?? '', /audience/);
  assert.match(
    nodeOfReview(
      status({
        user: {
          username: 'system:serviceaccount:default:default',
          extra: { 'authentication.kubernetes.io/node-name': ['node-a'] },
        },
      }),
      SA,
    ).why ?? '',
    /not the agents/,
  );
  assert.match(
    nodeOfReview(status({ user: { username: 'system:serviceaccount:cni-bench:cni-bench-agent', extra: {} } }), SA)
      .why ?? '',
    /not bound to a pod/,
  );
});
