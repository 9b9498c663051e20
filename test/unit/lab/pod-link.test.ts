/** What backend-link-down puts back: the routes a node had through a pod's veth, from real `ip -o route show dev X` output. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { routesToRestore } from '../../../lab/pod-link.js';
import { fixture } from '../../support/helpers/fixtures.js';

test('routesToRestore: each route as the arguments of ip route replace, flags of a dead link dropped', () => {
  assert.deepEqual(routesToRestore(fixture('ip/route-show-dev-eth0.txt')), [
    ['198.18.0.0/24', 'proto', 'kernel', 'scope', 'link', 'src', '198.18.0.1'],
    ['198.18.17.0/24', 'via', '198.18.0.2', 'proto', 'kernel'],
  ]);
  assert.deepEqual(routesToRestore(fixture('ip/route-show-dev-cilium-host.txt')), [
    ['198.18.16.0/24', 'via', '198.18.16.195', 'proto', 'kernel', 'src', '198.18.16.195'],
    ['198.18.16.195', 'proto', 'kernel', 'scope', 'link'],
  ]);
  // A route whose link lost its carrier is shown "linkdown": ip route replace does not take that word back.
  assert.deepEqual(routesToRestore(fixture('ip/route-show-dev-linkdown.txt')), [['198.18.250.9', 'scope', 'link']]);
  // A pod's veth on a bridge (iptables lab) or Cilium's lxc with BPF host routing carries no route of its own.
  assert.deepEqual(routesToRestore(''), []);
});
