/**
 * The pure part of finding a release's collector (cli/remote/kube-release.ts)
 * against a stand-in for CoreV1Api that returns objects shaped as the chart
 * renders them: the Service's annotations win, a Service without them (an
 * older chart) gets the chart's default Secret names, a named targetPort
 * resolves to the pod's container port, and refusals name what is missing.
 * The real apiserver path is test/integration/k8s-cli-release.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CoreV1Api, V1Pod, V1Service } from '@kubernetes/client-node';
import { containerPort, findRelease, readSecretKey } from '../../../cli/remote/kube-release.js';
import { portForwardError } from '../../../cli/remote/port-forward.js';
import { CniBenchError } from '../../../core/errors.js';

const SERVICE: V1Service = {
  metadata: {
    name: 'lab-collector',
    namespace: 'bench',
    labels: { 'app.kubernetes.io/name': 'cni-bench-collector', 'app.kubernetes.io/instance': 'lab' },
  },
  spec: {
    selector: { 'app.kubernetes.io/name': 'cni-bench-collector', 'app.kubernetes.io/instance': 'lab' },
    ports: [
      { name: 'grpc', port: 7070, targetPort: 'grpc' as unknown as never },
      { name: 'http', port: 8080, targetPort: 'http' as unknown as never },
    ],
  },
};
const POD = (name: string, ready: boolean): V1Pod => ({
  metadata: { name },
  spec: { containers: [{ name: 'collector', ports: [{ name: 'http', containerPort: 9443 }] }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

function fakeCore(o: { services?: V1Service[]; pods?: V1Pod[]; secretError?: number }): CoreV1Api {
  const fail = (code: number) => Object.assign(new Error(`HTTP-Code: ${code}`), { code });
  return {
    listNamespacedService: async () => ({ items: o.services ?? [] }),
    listServiceForAllNamespaces: async () => {
      throw fail(403);
    },
    listNamespacedPod: async (req: { labelSelector?: string }) => {
      assert.equal(req.labelSelector, 'app.kubernetes.io/name=cni-bench-collector,app.kubernetes.io/instance=lab');
      return { items: o.pods ?? [] };
    },
    readNamespacedSecret: async () => {
      if (o.secretError) throw fail(o.secretError);
      return { data: { token: Buffer.from('t0ken\n').toString('base64') } };
    },
  } as unknown as CoreV1Api;
}

test('the Service annotations name the Secrets, the scheme and the certificate name', async () => {
  const svc: V1Service = {
    ...SERVICE,
    metadata: {
      ...SERVICE.metadata,
      annotations: {
        'cni-bench.io/rest-token-secret': 'my-token',
        'cni-bench.io/rest-token-key': 'operator',
        'cni-bench.io/rest-scheme': 'https',
        'cni-bench.io/tls-secret': 'my-tls',
        'cni-bench.io/server-name': 'lab-collector.bench.svc',
      },
    },
  };
  const t = await findRelease(fakeCore({ services: [svc], pods: [POD('a', false), POD('b', true)] }), 'lab', 'bench');
  assert.deepEqual(t, {
    namespace: 'bench',
    service: 'lab-collector',
    pod: 'b',
    podPort: 9443,
    scheme: 'https',
    tokenSecret: 'my-token',
    tokenKey: 'operator',
    tlsSecret: 'my-tls',
    serverName: 'lab-collector.bench.svc',
  });
});

test("a Service without annotations (an older chart) gets the chart's default names over http", async () => {
  const t = await findRelease(fakeCore({ services: [SERVICE], pods: [POD('b', true)] }), 'lab', 'bench');
  assert.equal(t.scheme, 'http');
  assert.equal(t.tokenSecret, 'lab-rest-token');
  assert.equal(t.tokenKey, 'token');
  assert.equal(t.tlsSecret, undefined);
});

test('no release, no ready pod, an unreadable Secret and a refused port-forward are named', async () => {
  await assert.rejects(findRelease(fakeCore({}), 'lab', 'bench'), (e: CniBenchError) => {
    assert.equal(e.code, 'E_NOT_FOUND');
    assert.match(e.message, /^--release: no release 'lab' in namespace 'bench'/);
    return true;
  });
  await assert.rejects(
    findRelease(fakeCore({ services: [SERVICE], pods: [POD('a', false)] }), 'lab', 'bench'),
    /no Running and Ready collector pod in 'bench' \(1 pod\(s\) match/,
  );
  await assert.rejects(
    readSecretKey(fakeCore({ secretError: 403 }), 'bench', 'lab-rest-token', 'token', 'or pass --token-file'),
    (e: CniBenchError) => {
      assert.equal(e.code, 'E_FORBIDDEN');
      assert.match(
        e.message,
        /needs RBAC 'get' on secrets \(resourceNames: \['lab-rest-token'\]\) in namespace 'bench'/,
      );
      return true;
    },
  );
  await assert.rejects(
    readSecretKey(fakeCore({ secretError: 404 }), 'bench', 'lab-rest-token', 'token', 'or pass --token-file'),
    /Secret bench\/lab-rest-token not found; or pass --token-file/,
  );
  assert.equal((await readSecretKey(fakeCore({}), 'bench', 's', 'token', '')).toString(), 't0ken\n');
  const pf = portForwardError(new Error('Unexpected server response: 403'), 'bench', 'b');
  assert.equal(pf.code, 'E_FORBIDDEN');
  assert.match(pf.message, /'get' and 'create' on pods\/portforward in namespace 'bench'/);
});

test("a Service's targetPort: a number, a numeric string, a named container port, or missing", () => {
  const pod = POD('b', true);
  assert.equal(containerPort(pod, 8081, 8080), 8081);
  assert.equal(containerPort(pod, '8082', 8080), 8082);
  assert.equal(containerPort(pod, 'http', 8080), 9443);
  assert.equal(containerPort(pod, undefined, 8080), 8080);
  assert.throws(() => containerPort(pod, 'metrics', 8080), CniBenchError);
});
