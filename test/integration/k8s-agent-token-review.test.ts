/**
 * Agents' ServiceAccount tokens verified by a real kube-apiserver (the test
 * harness's etcd + kube-apiserver, no mocks): tokens are issued with the
 * TokenRequest API bound to pods on two nodes, the collector's reviewer asks
 * the TokenReview API, and the real collector binary (with
 * --agent-token-review) lets a real agent register only as the node its
 * token's pod runs on.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { tokenReviewer } from '../../collector/auth/token-review.js';
import { kubeConfigFrom } from '../support/harness/apply.js';
import { type ControlPlane, startControlPlane } from '../support/harness/control-plane.js';
import { startCollectorMain } from '../support/helpers/collector-main.js';
import { startLoopbackAgent } from '../support/helpers/loopback.js';
import { getJson, type Proc, stop, waitFor } from '../support/helpers/procs.js';

const NS = 'cni-bench';
const SA = 'cni-bench-agent';
let cp: ControlPlane;
let core: CoreV1Api;
const procs: Proc[] = [];
const tokens: Record<string, string> = {};

async function podToken(pod: string, sa: string, audiences = ['cni-bench']): Promise<string> {
  const p = await core.readNamespacedPod({ name: pod, namespace: NS });
  const r = await core.createNamespacedServiceAccountToken({
    name: sa,
    namespace: NS,
    body: {
      spec: {
        audiences,
        expirationSeconds: 3600,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod, uid: p.metadata?.uid ?? '' },
      },
    },
  });
  return r.status?.token ?? '';
}

before(async () => {
  cp = await startControlPlane();
  const kc = kubeConfigFrom(cp.adminKubeconfig);
  core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
  for (const sa of [SA, 'someone-else'])
    await core.createNamespacedServiceAccount({ namespace: NS, body: { metadata: { name: sa } } });
  for (const node of ['tr-a', 'tr-b']) {
    await core.createNode({ body: { metadata: { name: node } } });
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: `agent-${node}` },
        spec: { nodeName: node, serviceAccountName: SA, containers: [{ name: 'agent', image: 'example.invalid/a:1' }] },
      },
    });
  }
  await core.createNamespacedPod({
    namespace: NS,
    body: {
      metadata: { name: 'other' },
      spec: {
        nodeName: 'tr-a',
        serviceAccountName: 'someone-else',
        containers: [{ name: 'x', image: 'example.invalid/x:1' }],
      },
    },
  });
  for (const node of ['tr-a', 'tr-b']) tokens[node] = await podToken(`agent-${node}`, SA);
});

after(async () => {
  await Promise.all(procs.map((p) => stop(p, 'SIGKILL')));
  await cp?.stop();
});

test('the TokenReview API names the node of a pod-bound agent token, and refuses every other token with a reason', async () => {
  const refusals: string[] = [];
  const review = tokenReviewer(kubeConfigFrom(cp.adminKubeconfig), `${NS}/${SA}`, (why) => refusals.push(why));
  assert.equal(await review(tokens['tr-a']!), 'tr-a');
  assert.equal(await review(tokens['tr-b']!), 'tr-b');
  assert.equal(await review(await podToken('agent-tr-a', SA, ['elsewhere'])), undefined, 'another audience');
  assert.equal(await review(await podToken('other', 'someone-else')), undefined, 'another ServiceAccount');
  const unbound = (
    await core.createNamespacedServiceAccountToken({
      name: SA,
      namespace: NS,
      body: { spec: { audiences: ['cni-bench'], expirationSeconds: 3600 } },
    })
  ).status?.token;
  assert.equal(await review(unbound!), undefined, 'not bound to a pod');
  assert.equal(await review(`${tokens['tr-a']!.slice(0, -4)}AAAA`), undefined, 'a forged signature');
  assert.deepEqual(refusals, [
    'not authenticated',
    "not the agents' ServiceAccount (system:serviceaccount:cni-bench:someone-else)",
    'the token is not bound to a pod on a node',
    'not authenticated',
  ]);
});

test('the real collector with --agent-token-review: an agent registers only as its token\u2019s node', async () => {
  // Agents have identities, so REST wants the operator's token.
  const operatorToken = 'operator-token-for-the-token-review-test';
  const operatorFile = join(cp.dir, 'operator-token');
  writeFileSync(operatorFile, operatorToken, { mode: 0o600 });
  const {
    proc: collector,
    grpc,
    http: base,
  } = await startCollectorMain([
    '--rest-token-file',
    operatorFile,
    '--kubernetes',
    'kubeconfig',
    '--kubeconfig',
    cp.adminKubeconfig,
    '--agent-token-review',
    'true',
    '--agent-service-account',
    `${NS}/${SA}`,
  ]);
  procs.push(collector);
  const agent = (node: string, token: string): Proc => {
    const file = join(cp.dir, `token-${node}-${procs.length}`);
    writeFileSync(file, token, { mode: 0o600 });
    const p = startLoopbackAgent(grpc, node, 0, ['--token-file', file]);
    procs.push(p);
    return p;
  };
  const asOperator = { headers: { authorization: `Bearer ${operatorToken}` } };
  const registered = async (): Promise<string[]> =>
    (await getJson(`${base}/v1/agents`, asOperator)).body.agents.map((a: { nodeName: string }) => a.nodeName).sort();
  // tr-a's token claiming tr-b: refused, whatever it retries.
  const impostor = agent('tr-b', tokens['tr-a']!);
  const own = agent('tr-a', tokens['tr-a']!);
  await waitFor('tr-a registered with its own token', async () => (await registered()).includes('tr-a'), 60_000).catch(
    (e) => {
      throw new Error(`${e.message}: ${collector.output().slice(-3000)} AGENT ${own.output().slice(-1500)}`);
    },
  );
  await new Promise((r) => setTimeout(r, 3000));
  assert.deepEqual(await registered(), ['tr-a'], 'tr-a\u2019s token does not speak for tr-b');
  assert.match(collector.output(), /registration refused.*"node":"tr-b"/);
  await stop(impostor);
  agent('tr-b', tokens['tr-b']!);
  await waitFor('tr-b registered with its own token', async () => (await registered()).includes('tr-b'), 60_000);
  const agents = (await getJson(`${base}/v1/agents`, asOperator)).body.agents;
  assert.equal((await getJson(`${base}/v1/agents`)).status, 401, 'REST without the operator token');
  assert.ok(agents.every((a: { connected: boolean }) => a.connected));
  await stop(own);
});
