/**
 * `cni-bench --release` against the chart as it runs (issue 17): the chart
 * installed with `helm install` (rest.tls on) on the harness's real
 * apiserver, the collector and agents run on this host with exactly the
 * environment the chart gives their containers, the release's real Secrets
 * (operator token, generated CA and certificates: gRPC mTLS and REST over
 * TLS) and ServiceAccount tokens (harness/chart-processes.ts names the
 * substitutes: loopback listeners on free ports, a kubeconfig with the
 * collector ServiceAccount's token instead of in-cluster config). The CLI is
 * given only a kubeconfig of a user holding the RBAC docs/cli-cluster.md
 * lists, and the namespace: it finds the Service, reads the token and the CA
 * from the Secrets and port-forwards through the apiserver to the collector
 * pod. Substitute, named: the collector pod's node is a second kwok serving
 * the kubelet API (harness/kwok-kubelet.ts) that relays the port-forward
 * stream to the local collector; kwok runs no containers. The pod's IP is not
 * routable here, so a working CLI shows the port-forward carried it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CoreV1Api, KubeConfig, type KubernetesObject, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { CHART_DIR, helm, kubeConfigFrom, renderChart, serviceAccountKubeconfig } from '../support/harness/apply.js';
import { containerEnv, podTemplate } from '../support/harness/chart-processes.js';
import { type ControlPlane, startControlPlane } from '../support/harness/control-plane.js';
import { type KwokKubelet, startKwokKubelet } from '../support/harness/kwok-kubelet.js';
import { addKwokNodes } from '../support/harness/kwok-nodes.js';
import {
  AGENT_MAIN,
  CLI_MAIN,
  COLLECTOR_MAIN,
  freePort,
  type Proc,
  startNode,
  stop,
  waitFor,
} from '../support/helpers/procs.js';
import { TestCerts } from '../support/helpers/test-certs.js';

const NS = 'cni-bench-rel';
const RELEASE = 'cni-bench-agent';
const SETS = ['rest.tls=true', 'collector.nodeSelector.cni-bench\\.io/collector-node=yes'];
const tmp = mkdtempSync(join(tmpdir(), 'cnib-cli-release-'));
let cp: ControlPlane;
let admin: KubeConfig;
let kubelet: KwokKubelet;
let collector: Proc;
const agents: Proc[] = [];
let nodes: string[];
/** Kubeconfigs of users with the documented RBAC, and with one grant missing each. */
const users: Record<string, string> = {};

const OPERATOR_RULES = [
  { apiGroups: [''], resources: ['services', 'pods'], verbs: ['list'] },
  { apiGroups: [''], resources: ['pods/portforward'], verbs: ['get', 'create'] },
  { apiGroups: [''], resources: ['secrets'], resourceNames: ['cni-bench-rest-token', 'cni-bench-tls'], verbs: ['get'] },
];

async function grant(user: string, rules: typeof OPERATOR_RULES): Promise<string> {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({ namespace: NS, body: { metadata: { name: user }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace: NS,
    body: {
      metadata: { name: user },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: user },
      subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }],
    },
  });
  return cp.kubeconfigFor(user);
}

async function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const p = startNode(CLI_MAIN, args, { CNI_BENCH_LOG_LEVEL: 'warn', CNI_BENCH_COLLECTOR: '', ...env });
  const code = await p.exited;
  const stdout = p.stdout();
  return { code, stdout, stderr: p.output().replace(stdout, '') };
}

async function pod(selector: string, node?: string) {
  const core = admin.makeApiClient(CoreV1Api);
  const list = await core.listNamespacedPod({ namespace: NS, labelSelector: selector });
  const p = list.items.find((x) => !node || x.spec?.nodeName === node);
  if (!p) throw new Error(`no pod ${selector} on ${node}`);
  return p;
}

before(async () => {
  cp = await startControlPlane({ controllers: true, kwok: true });
  admin = kubeConfigFrom(cp.adminKubeconfig);
  nodes = await addKwokNodes(cp.adminKubeconfig, 1, 'rel-node');
  const [grpcPort, httpPort] = await Promise.all([freePort(), freePort()]);
  kubelet = await startKwokKubelet({
    dir: cp.dir,
    admin,
    adminKubeconfig: cp.adminKubeconfig,
    node: 'rel-collector-node',
    labels: { 'cni-bench.io/collector-node': 'yes' },
    namespace: NS,
    podPort: 8080,
    targetPort: httpPort,
  });
  nodes.push(kubelet.node);
  const sets = SETS.flatMap((s) => ['--set', s]);
  helm(cp, [
    'install',
    RELEASE,
    CHART_DIR,
    '--namespace',
    NS,
    '--create-namespace',
    ...sets,
    '--wait',
    '--timeout',
    '120s',
  ]);
  const rendered: KubernetesObject[] = renderChart(RELEASE, NS, SETS);

  // The collector as its Deployment runs it.
  const cPod = await pod('app.kubernetes.io/name=cni-bench-collector');
  assert.equal(cPod.spec?.nodeName, kubelet.node);
  const cEnv = await containerEnv(
    admin,
    podTemplate(rendered, 'Deployment', 'cni-bench-collector'),
    {
      namespace: NS,
      podName: cPod.metadata?.name ?? '',
      podUid: cPod.metadata?.uid ?? '',
      nodeName: kubelet.node,
      podIp: cPod.status?.podIP ?? '',
    },
    join(tmp, 'collector'),
  );
  assert.equal(cEnv.CNI_BENCH_REST_TLS, 'true');
  assert.equal(cEnv.CNI_BENCH_KUBERNETES, 'in-cluster');
  collector = startNode(COLLECTOR_MAIN, [], {
    ...cEnv,
    CNI_BENCH_KUBERNETES: 'kubeconfig',
    CNI_BENCH_KUBECONFIG: await serviceAccountKubeconfig(cp, NS, 'cni-bench-collector'),
    CNI_BENCH_GRPC_LISTEN: `127.0.0.1:${grpcPort}`,
    CNI_BENCH_HTTP_HOST: '127.0.0.1',
    CNI_BENCH_HTTP_PORT: String(httpPort),
    CNI_BENCH_DB: join(tmp, 'collector.db'),
  });
  await waitFor('the collector to listen', () => collector.output().includes('"collector listening"'), 120_000).catch(
    (err: Error) => {
      throw new Error(`${err.message}\n${collector.output()}`);
    },
  );
  // Every agent pod's agent, as the DaemonSet runs it.
  const aTpl = podTemplate(rendered, 'DaemonSet', 'cni-bench-agent');
  for (const node of nodes) {
    const p = await pod('app.kubernetes.io/name=cni-bench-agent', node);
    const env = await containerEnv(
      admin,
      aTpl,
      {
        namespace: NS,
        podName: p.metadata?.name ?? '',
        podUid: p.metadata?.uid ?? '',
        nodeName: node,
        podIp: '127.0.0.1',
      },
      join(tmp, `agent-${node}`),
    );
    const [health, monitor] = await Promise.all([freePort(), freePort()]);
    agents.push(
      startNode(AGENT_MAIN, [], {
        ...env,
        CNI_BENCH_COLLECTOR: `127.0.0.1:${grpcPort}`,
        CNI_BENCH_HEALTH_PORT: String(health),
        CNI_BENCH_MONITOR_PORT: String(monitor),
      }),
    );
  }
  users.operator = await grant('operator', OPERATOR_RULES);
  users.noSecrets = await grant('no-secrets', OPERATOR_RULES.slice(0, 2));
  users.noForward = await grant('no-forward', [OPERATOR_RULES[0], OPERATOR_RULES[2]] as typeof OPERATOR_RULES);
});

after(async () => {
  await Promise.all(agents.map((a) => stop(a)));
  await stop(collector);
  await kubelet?.stop();
  await cp?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

test('agents, cluster and runs reach the chart-run collector through --kubeconfig and the release (or the context namespace)', async (t) => {
  const kube = ['--kubeconfig', users.operator as string, '--namespace', NS];
  const a = await waitFor(
    'both agents connected, seen through the CLI',
    async () => {
      const r = await cli(['agents', ...kube, '--format', 'json']);
      assert.equal(r.code, 0, r.stderr);
      const list = JSON.parse(r.stdout) as { nodeName: string; connected: boolean }[];
      return list.filter((x) => x.connected).length === nodes.length ? list : undefined;
    },
    90_000,
    1000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${agents.map((x) => x.output().slice(-2000)).join('\n---\n')}`);
  });
  assert.deepEqual(a.map((x) => x.nodeName).sort(), [...nodes].sort());
  const md = await cli(['agents', ...kube]);
  assert.equal(md.code, 0, md.stderr);
  assert.match(md.stdout, new RegExp(`${nodes.length} of ${nodes.length} connected`));
  t.diagnostic(`cni-bench agents:\n${md.stdout}`);

  const c = await cli(['cluster', ...kube, '--format', 'json']);
  assert.equal(c.code, 0, c.stderr);
  const cluster = JSON.parse(c.stdout) as { serviceFrontend: string; description: { nodes?: unknown } };
  assert.equal(cluster.serviceFrontend, 'Kubernetes Services and EndpointSlices');
  t.diagnostic(`cni-bench cluster:\n${(await cli(['cluster', ...kube])).stdout}`);

  const r = await cli(['runs', ...kube, '--format', 'json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), []);

  // No --namespace: the kubeconfig context's namespace; no --release: the chart's default name.
  const kc = kubeConfigFrom(users.operator as string);
  const current = kc.getContextObject(kc.getCurrentContext());
  assert.ok(current);
  const withNs = new KubeConfig();
  withNs.loadFromOptions({
    clusters: kc.getClusters(),
    users: kc.getUsers(),
    contexts: [{ ...current, namespace: NS }],
    currentContext: current.name,
  });
  const nsFile = join(tmp, 'operator-in-ns.kubeconfig');
  writeFileSync(nsFile, withNs.exportConfig(), { mode: 0o600 });
  const byContext = await cli(['runs', '--format', 'json'], { KUBECONFIG: nsFile });
  assert.equal(byContext.code, 0, byContext.stderr);
  assert.deepEqual(JSON.parse(byContext.stdout), []);
});

test('a run started with KUBECONFIG and the namespace only succeeds, follows progress and reports; report and compare with --release', {
  timeout: 300_000,
}, async (t) => {
  const scenario = join(tmp, 'scenario.yaml');
  writeFileSync(
    scenario,
    [
      'name: through the release',
      'roundSleepSeconds: 0',
      'measurements:',
      '  - kind: throughput',
      '    path: pod-to-pod',
      '    rounds: 2',
      '    durationSeconds: 1',
      '    warmupSeconds: 0',
      '',
    ].join('\n'),
  );
  const run = await cli(['run', '--namespace', NS, '--scenario', scenario, '--format', 'json', '--log', 'json'], {
    KUBECONFIG: users.operator,
    CNI_BENCH_LOG_LEVEL: 'info',
  });
  assert.equal(run.code, 0, `${run.stdout.slice(0, 2000)}\n${run.stderr.slice(-3000)}`);
  const report = JSON.parse(run.stdout) as { run: { id: string; state: string }; rows: unknown[] };
  assert.equal(report.run.state, 'succeeded');
  assert.ok(report.rows.length >= 1);
  assert.match(
    run.stderr,
    /"via":"a port-forward to pod cni-bench-rel\/cni-bench-collector-[^"]+:8080 \(release cni-bench-agent/,
  );
  const list = await cli(['runs', '--namespace', NS], { KUBECONFIG: users.operator });
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`\\| ${report.run.id} \\| through the release \\| succeeded`));
  t.diagnostic(`cni-bench runs:\n${list.stdout}`);
  // report and compare read the local store by default: --release (or --context) sends them to the collector.
  const rel = ['--release', RELEASE, '--namespace', NS];
  const csv = await cli(['report', report.run.id, ...rel, '--format', 'csv'], { KUBECONFIG: users.operator });
  assert.equal(csv.code, 0, csv.stderr);
  assert.match(csv.stdout, /TCP pod-to-pod 1 stream/);
  const cmp = await cli(['compare', report.run.id, report.run.id, ...rel, '--fail-on', 'worse'], {
    KUBECONFIG: users.operator,
  });
  assert.equal(cmp.code, 0, cmp.stderr);
  assert.match(cmp.stdout, /TCP pod-to-pod 1 stream/);
  t.diagnostic(`report row: ${JSON.stringify(report.rows[0]).slice(0, 600)}`);
  t.diagnostic(`run stderr (first lines):\n${run.stderr.split('\n').slice(0, 4).join('\n')}`);
});

test('what is missing or wrong is named: no release, an unreadable Secret, no port-forward right, another CA, a wrong token, no such context', async (t) => {
  const noRelease = await cli([
    'runs',
    '--kubeconfig',
    users.operator as string,
    '--namespace',
    NS,
    '--release',
    'other',
  ]);
  assert.equal(noRelease.code, 1);
  assert.match(noRelease.stderr, /--release: no release 'other' in namespace 'cni-bench-rel'/);

  const secret = await cli(['runs', '--kubeconfig', users.noSecrets as string, '--namespace', NS]);
  assert.equal(secret.code, 1);
  assert.match(
    secret.stderr,
    /cannot read Secret cni-bench-rel\/cni-bench-rest-token: forbidden; needs RBAC 'get' on secrets \(resourceNames: \['cni-bench-rest-token'\]\) in namespace 'cni-bench-rel'; or pass --token-file/,
  );

  const forward = await cli(['runs', '--kubeconfig', users.noForward as string, '--namespace', NS]);
  assert.equal(forward.code, 1);
  assert.match(
    forward.stderr,
    /port-forward to pod cni-bench-rel\/cni-bench-collector-\S+ forbidden; needs RBAC 'get' and 'create' on pods\/portforward/,
  );

  // The CA is checked: another CA's certificate of the same name is refused, a wrong token is refused.
  const other = new TestCerts('cnib-other-ca-');
  try {
    other.ca('other');
    const ca = await cli([
      'runs',
      '--kubeconfig',
      users.operator as string,
      '--namespace',
      NS,
      '--ca-file',
      other.file('other.crt'),
    ]);
    assert.equal(ca.code, 1);
    assert.match(
      ca.stderr,
      /cni-bench: collector: cannot reach https:\/\/127\.0\.0\.1:\d+\/ through a port-forward .*\((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|DEPTH_ZERO_SELF_SIGNED_CERT)/,
    );
    t.diagnostic(`another CA, exit ${ca.code}: ${ca.stderr.trim()}`);
  } finally {
    other.remove();
  }
  const tokenFile = join(tmp, 'wrong-token');
  writeFileSync(tokenFile, 'not-the-operator-token');
  const token = await cli([
    'runs',
    '--kubeconfig',
    users.operator as string,
    '--namespace',
    NS,
    '--token-file',
    tokenFile,
  ]);
  assert.equal(token.code, 1);
  assert.match(token.stderr, /collector: .*(token|unauthenticated|Unauthorized)/i);

  const ctx = await cli(['runs', '--kubeconfig', users.operator as string, '--context', 'nope']);
  assert.equal(ctx.code, 2);
  assert.match(ctx.stderr, /--context: no context 'nope' in the kubeconfig/);
  for (const r of [noRelease, secret, forward, token, ctx]) t.diagnostic(`exit ${r.code}: ${r.stderr.trim()}`);
});
