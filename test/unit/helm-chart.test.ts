/**
 * The Helm chart in deploy/helm/cni-bench-agent, through the real helm binary
 * (built by scripts/build-control-plane.sh): lint, the objects each values file
 * in test/fixtures/helm-values renders, the env vars against the code that
 * reads them, RBAC against what the collector calls, and the schema refusing
 * wrong types and unknown keys. No cluster: `helm template` only.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { AGENT_ENV, loadAgentConfig } from '../../agent/config.js';
import { AGENT_NODE_FLAGS } from '../../agent/node-flags.js';
import { COLLECTOR_ENV, loadCollectorConfig } from '../../collector/config.js';
import { type ApiCall, COLLECTOR_API_CALLS, type Scope } from '../../collector/kubernetes/permissions.js';
import { repoRoot } from '../support/helpers/fixtures.js';

type Obj = Record<string, any>;
interface Doc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  [k: string]: any;
}
interface Render {
  set?: string[];
  values?: string[];
  release?: string;
  namespace?: string;
}

const chart = join(repoRoot, 'deploy/helm/cni-bench-agent');
const valuesDir = join(repoRoot, 'test/fixtures/helm-values');
const valuesFiles = readdirSync(valuesDir)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const helmBin = join(process.env.CNI_BENCH_TOOLS_DIR ?? '/var/cache/cni-bench/tools', 'bin', 'helm');
const NS = 'bench';
const RELEASE = 'cni-bench-agent';

// helm gets a throwaway home and no kubeconfig: nothing of the caller's is read or written.
const home = mkdtempSync(join(tmpdir(), 'cni-bench-helm-'));
after(() => rmSync(home, { recursive: true, force: true }));
const helmEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  HELM_CACHE_HOME: join(home, 'cache'),
  HELM_CONFIG_HOME: join(home, 'config'),
  HELM_DATA_HOME: join(home, 'data'),
  KUBECONFIG: join(home, 'no-kubeconfig'),
};

function helm(args: string[]): { code: number; stdout: string; stderr: string } {
  assert.ok(
    existsSync(helmBin),
    `helm not found at ${helmBin}: build it with scripts/build-control-plane.sh (CNI_BENCH_CP_TOOLS=helm), or set CNI_BENCH_TOOLS_DIR to a folder holding bin/helm`,
  );
  try {
    const stdout = execFileSync(helmBin, args, {
      env: helmEnv,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
      maxBuffer: 16 << 20,
    });
    return { code: 0, stdout, stderr: '' };
  } catch (err) {
    const e = err as { status?: number | null; stdout?: string; stderr?: string };
    if (typeof e.status !== 'number') throw err;
    return { code: e.status, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function templateArgs(r: Render): string[] {
  return [
    'template',
    r.release ?? RELEASE,
    chart,
    '--namespace',
    r.namespace ?? NS,
    ...(r.values ?? []).flatMap((f) => ['--values', join(valuesDir, f)]),
    ...(r.set ?? []).flatMap((s) => ['--set', s]),
  ];
}

function render(r: Render = {}): Doc[] {
  const out = helm(templateArgs(r));
  assert.equal(out.code, 0, `helm template ${JSON.stringify(r)} failed:\n${out.stderr}`);
  return parseAllDocuments(out.stdout)
    .map((d) => {
      assert.equal(d.errors.length, 0, String(d.errors[0]));
      return d.toJS() as Doc | null;
    })
    .filter((d): d is Doc => d !== null);
}

/** Every rendering the other tests look at: defaults, each values file, TLS off. */
const renderings = (): [string, Render][] => [
  ['defaults', {}],
  ...valuesFiles.map((f): [string, Render] => [f, { values: [f] }]),
  ['tls disabled', { set: ['tls.mode=disabled'] }],
];

function all(docs: Doc[], kind: string): Doc[] {
  return docs.filter((d) => d.kind === kind);
}

function one(docs: Doc[], kind: string, name: string): Doc {
  const found = docs.filter((d) => d.kind === kind && d.metadata.name === name);
  assert.equal(
    found.length,
    1,
    `${kind}/${name} (rendered: ${docs.map((d) => `${d.kind}/${d.metadata.name}`).join(', ')})`,
  );
  return found[0]!;
}

const podOf = (docs: Doc[], kind: 'DaemonSet' | 'Deployment', name: string): Obj =>
  one(docs, kind, name).spec.template.spec;
const agentPod = (docs: Doc[], prefix = 'cni-bench'): Obj => podOf(docs, 'DaemonSet', `${prefix}-agent`);
const collectorPod = (docs: Doc[], prefix = 'cni-bench'): Obj => podOf(docs, 'Deployment', `${prefix}-collector`);
const envValue = (c: Obj, name: string): string | undefined => c.env.find((e: Obj) => e.name === name)?.value;

const fieldSamples: Record<string, string> = {
  'spec.nodeName': 'node-a',
  'metadata.name': 'cni-bench-agent-x1',
  'metadata.namespace': NS,
  'status.podIP': '10.0.0.5',
  'status.hostIP': '192.0.2.10',
};

/** The container's env as the process would see it; every name must be one the binary reads. */
function envOf(c: Obj, known: Record<string, string>, where: string): NodeJS.ProcessEnv {
  const names = new Set(Object.values(known));
  const env: NodeJS.ProcessEnv = {};
  for (const e of c.env as Obj[]) {
    assert.ok(names.has(e.name), `${where}: env ${e.name} is not read by the binary (known: ${[...names].join(', ')})`);
    env[e.name] = e.value ?? fieldSamples[e.valueFrom?.fieldRef?.fieldPath];
    assert.ok(env[e.name] !== undefined, `${where}: env ${e.name} has no value`);
  }
  return env;
}

/** The file an env var names must sit in a read-only mount of the named volume. */
function assertMountedFile(pod: Obj, c: Obj, envName: string, volume: string): void {
  const file = envValue(c, envName);
  assert.ok(file, `${c.name}: ${envName} is not set`);
  const mount = (c.volumeMounts as Obj[]).find((m) => file.startsWith(`${m.mountPath}/`));
  assert.equal(mount?.name, volume, `${c.name}: ${envName}=${file} is not in volume ${volume}`);
  assert.equal(mount.readOnly, true, `${c.name}: ${volume} is mounted read-write`);
  assert.ok(
    (pod.volumes as Obj[]).some((v) => v.name === volume),
    `pod has no volume ${volume}`,
  );
}

const volume = (pod: Obj, name: string): Obj => (pod.volumes as Obj[]).find((v) => v.name === name)!;
const defaults = parse(readFileSync(join(chart, 'values.yaml'), 'utf8')) as Obj;

test('helm lint passes for the defaults and every values file', async (t) => {
  for (const f of [undefined, ...valuesFiles]) {
    await t.test(f ?? 'defaults', () => {
      const out = helm(['lint', chart, '--strict', '--namespace', NS, ...(f ? ['--values', join(valuesDir, f)] : [])]);
      assert.equal(out.code, 0, `helm lint ${f ?? ''}:\n${out.stdout}${out.stderr}`);
    });
  }
});

test('the agent DaemonSet is on the pod network, on every node, with the capabilities from values', () => {
  const docs = render();
  const pod = agentPod(docs);
  const c = pod.containers[0] as Obj;
  assert.equal(pod.hostPID, true, 'nsenter into /proc/1/ns/net needs hostPID');
  assert.notEqual(pod.hostNetwork, true, 'the agent measures the pod network');
  assert.deepEqual(pod.tolerations, [{ operator: 'Exists' }]);
  assert.equal(pod.automountServiceAccountToken, false, 'the agent does not call the API');
  assert.equal(one(docs, 'ServiceAccount', 'cni-bench-agent').automountServiceAccountToken, false);
  assert.deepEqual(c.securityContext.capabilities, { drop: ['ALL'], add: defaults.agent.capabilities });
  assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  assert.deepEqual(volume(pod, 'bpffs').hostPath, { path: '/sys/fs/bpf', type: 'DirectoryOrCreate' });
  assert.equal(c.volumeMounts.find((m: Obj) => m.name === 'bpffs').readOnly, true);
  assert.deepEqual(volume(pod, 'xtables-lock').hostPath, { path: '/run/xtables.lock', type: 'FileOrCreate' });
  assert.equal(c.volumeMounts.find((m: Obj) => m.mountPath === '/tmp').name, 'tmp');
  assert.deepEqual(volume(pod, 'tmp').emptyDir, {});
  assert.deepEqual(
    c.args,
    [...AGENT_NODE_FLAGS, '/opt/cni-bench/dist/agent/main.js'],
    'the agent Node flags the lab and the bench measure',
  );
  assert.deepEqual(agentPod(render({ set: ['agent.nodeFlags=null'] })).containers[0].args, [
    '/opt/cni-bench/dist/agent/main.js',
  ]);

  const downward = Object.fromEntries(
    (c.env as Obj[]).filter((e) => e.valueFrom).map((e) => [e.valueFrom.fieldRef.fieldPath, e.name]),
  );
  assert.deepEqual(downward, {
    'spec.nodeName': AGENT_ENV.nodeName,
    'metadata.name': AGENT_ENV.podName,
    'status.podIP': AGENT_ENV.podIp,
    'status.hostIP': AGENT_ENV.hostIp,
  });
  const config = loadAgentConfig([], envOf(c, AGENT_ENV, 'agent'));
  const svc = one(docs, 'Service', 'cni-bench-collector');
  const grpc = svc.spec.ports.find((p: Obj) => p.name === 'grpc').port;
  assert.equal(config.collector, `cni-bench-collector.${NS}.svc:${grpc}`);
  assert.equal(config.nodeName, 'node-a');
  assert.equal(config.hostNetns, '/proc/1/ns/net');
  assert.equal(c.ports.find((p: Obj) => p.name === 'health').containerPort, config.healthPort);
  assert.equal(config.tlsServerName, `cni-bench-collector.${NS}.svc`, 'the name the collector certificate carries');
  for (const name of ['CNI_BENCH_TLS_CA_FILE', 'CNI_BENCH_TLS_CERT_FILE', 'CNI_BENCH_TLS_KEY_FILE'])
    assertMountedFile(pod, c, name, 'tls');
});

test('the collector runs as non-root with no capabilities and in-cluster config that finds the agents', () => {
  const docs = render();
  const deploy = one(docs, 'Deployment', 'cni-bench-collector');
  const pod = collectorPod(docs);
  const c = pod.containers[0] as Obj;
  assert.equal(deploy.spec.replicas, 1);
  assert.equal(deploy.spec.strategy.type, 'Recreate');
  assert.deepEqual(pod.securityContext, {
    runAsNonRoot: true,
    runAsUser: 1000,
    runAsGroup: 1000,
    fsGroup: 1000,
    seccompProfile: { type: 'RuntimeDefault' },
  });
  assert.deepEqual(c.securityContext, {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
  });
  assert.equal(pod.automountServiceAccountToken, true);

  const config = loadCollectorConfig([], envOf(c, COLLECTOR_ENV, 'collector'));
  assert.equal(config.kubernetes, 'in-cluster');
  assert.equal(config.namespace, NS);
  assert.equal(config.sweepNamespace, `${RELEASE}-sweep`);
  assert.ok(
    config.tlsCertFile && config.tlsKeyFile && config.tlsCaFile,
    'mTLS: certificate, key and the CA agents are checked against',
  );
  const agentDs = one(docs, 'DaemonSet', 'cni-bench-agent');
  const selector = Object.fromEntries(config.agentSelector.split(',').map((kv) => kv.split('=')));
  assert.deepEqual(selector, agentDs.spec.selector.matchLabels, 'CNI_BENCH_AGENT_SELECTOR is the DaemonSet selector');
  for (const [k, v] of Object.entries(selector)) assert.equal(agentDs.spec.template.metadata.labels[k], v, k);

  const svc = one(docs, 'Service', 'cni-bench-collector');
  const port = (n: string): number => c.ports.find((p: Obj) => p.name === n).containerPort;
  assert.equal(port('grpc'), Number(config.grpcListen.split(':').at(-1)));
  assert.equal(port('http'), config.httpPort);
  assert.deepEqual(
    svc.spec.ports.map((p: Obj) => [p.name, p.port]),
    [
      ['grpc', 7070],
      ['http', 8080],
    ],
  );
  for (const [k, v] of Object.entries(svc.spec.selector as Record<string, string>))
    assert.equal(deploy.spec.template.metadata.labels[k], v, `Service selector ${k}`);
  assert.deepEqual(
    one(docs, 'PodDisruptionBudget', 'cni-bench-collector').spec.selector.matchLabels,
    deploy.spec.selector.matchLabels,
  );
  assert.deepEqual(volume(pod, 'store'), { name: 'store', emptyDir: {} });
  assertMountedFile(pod, c, 'CNI_BENCH_REST_TOKEN_FILE', 'rest-token');
  for (const name of ['CNI_BENCH_TLS_CA_FILE', 'CNI_BENCH_TLS_CERT_FILE', 'CNI_BENCH_TLS_KEY_FILE'])
    assertMountedFile(pod, c, name, 'tls');
});

test('every env var in every rendering is one the binary reads, and every object carries the chart labels', async (t) => {
  for (const [name, r] of renderings()) {
    await t.test(name, () => {
      const docs = render(r);
      envOf(agentPod(docs).containers[0], AGENT_ENV, `${name}: agent`);
      envOf(collectorPod(docs).containers[0], COLLECTOR_ENV, `${name}: collector`);
      for (const d of docs) {
        const l = d.metadata.labels ?? {};
        const what = `${name}: ${d.kind}/${d.metadata.name}`;
        assert.match(l['app.kubernetes.io/name'] ?? '', /^cni-bench-(agent|collector|test)$/, what);
        assert.equal(l['app.kubernetes.io/instance'], RELEASE, what);
        assert.equal(l['app.kubernetes.io/part-of'], 'cni-bench', what);
        assert.equal(l['app.kubernetes.io/managed-by'], 'Helm', what);
        assert.equal(l['helm.sh/chart'], 'cni-bench-agent-0.1.0', what);
      }
    });
  }
});

/** Every RBAC rule as "<kind> <namespace>: <group>/<resource>[names] <verbs>", and the bindings checked. */
function rbacRules(all: Doc[]): string[] {
  // The collector's and agents' grants: `helm test` hooks (their own ServiceAccount) are checked in helm-chart-user.test.ts.
  const docs = all.filter(
    (d) => !(d.metadata as { annotations?: Record<string, string> }).annotations?.['helm.sh/hook'],
  );
  const roles = docs.filter((d) => d.kind === 'Role' || d.kind === 'ClusterRole');
  for (const b of docs.filter((d) => d.kind === 'RoleBinding' || d.kind === 'ClusterRoleBinding')) {
    const roleKind = b.kind === 'RoleBinding' ? 'Role' : 'ClusterRole';
    assert.deepEqual(
      b.roleRef,
      { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: b.metadata.name },
      `${b.kind}/${b.metadata.name}`,
    );
    assert.ok(
      roles.some(
        (r) =>
          r.kind === roleKind && r.metadata.name === b.metadata.name && r.metadata.namespace === b.metadata.namespace,
      ),
      `${b.kind}/${b.metadata.name} binds a role that is not rendered`,
    );
    assert.deepEqual(b.subjects, [{ kind: 'ServiceAccount', name: 'cni-bench-collector', namespace: NS }]);
  }
  assert.equal(roles.length, docs.filter((d) => d.kind.endsWith('RoleBinding')).length, 'one binding per role');
  return roles
    .flatMap((r) =>
      (r.rules as Obj[]).flatMap((rule) =>
        (rule.apiGroups as string[]).flatMap((g) =>
          (rule.resources as string[]).map(
            (res) =>
              `${r.kind} ${r.metadata.namespace ?? '-'}: ${g}/${res}${rule.resourceNames ? `[${rule.resourceNames.join(',')}]` : ''} ${rule.verbs.join(',')}`,
          ),
        ),
      ),
    )
    .sort();
}

const baseRules = [
  'ClusterRole -: /nodes get,list,watch',
  // Agents' identities: the collector asks the API server to review each agent's pod-bound token.
  'ClusterRole -: authentication.k8s.io/tokenreviews create',
  `Role ${NS}: /pods get,list,watch`,
  `Role ${NS}: /services get,list,create,delete,deletecollection`,
  `Role ${NS}: discovery.k8s.io/endpointslices get,list,create,update,delete,deletecollection`,
];

/** Whether the rendered RBAC lets the collector make this call (the chart's toggles at their rendered values). */
function grants(docs: Doc[], call: ApiCall, ciliumNs = 'kube-system', dataplaneNs = 'kube-system'): boolean {
  const ns: Record<Scope, string | undefined> = {
    own: NS,
    sweep: `${RELEASE}-sweep`,
    cilium: ciliumNs,
    'kube-system': 'kube-system',
    dataplane: dataplaneNs,
    cluster: undefined,
  };
  const roles = docs.filter((d) =>
    call.scope === 'cluster' ? d.kind === 'ClusterRole' : d.kind === 'Role' && d.metadata.namespace === ns[call.scope],
  );
  return roles.some((r) =>
    (r.rules as Obj[]).some(
      (rule) =>
        rule.apiGroups.includes(call.group) &&
        rule.resources.includes(call.resource) &&
        rule.verbs.includes(call.verb) &&
        (!rule.resourceNames || (call.name !== undefined && rule.resourceNames.includes(call.name))),
    ),
  );
}
const callName = (c: ApiCall): string =>
  `${c.verb} ${c.group}/${c.resource}${c.name ? `/${c.name}` : ''} in ${c.scope} (${c.by})`;

test('RBAC by default is what the collector calls and nothing else', () => {
  const docs = render();
  assert.deepEqual(
    rbacRules(docs),
    [
      ...baseRules,
      `Role ${RELEASE}-sweep: /services get,list,create,delete,deletecollection`,
      `Role ${RELEASE}-sweep: discovery.k8s.io/endpointslices get,list,create,delete,deletecollection`,
      'Role kube-system: /configmaps[cilium-config] get',
      'Role kube-system: /configmaps[kube-proxy] get',
    ].sort(),
  );
  assert.equal(
    all(docs, 'Namespace')
      .map((n) => n.metadata.name)
      .join(),
    `${RELEASE}-sweep`,
  );
  const optIn = new Set([
    'rbac.ciliumConfig.write',
    'rbac.networkPolicy.enabled',
    'rbac.ciliumNetworkPolicy.enabled',
    'rbac.dataplaneRestart.enabled',
  ]);
  for (const c of COLLECTOR_API_CALLS.filter((x) => !optIn.has(x.toggle ?? '')))
    assert.ok(grants(docs, c), `not granted: ${callName(c)}`);
  for (const c of COLLECTOR_API_CALLS.filter((x) => optIn.has(x.toggle ?? '')))
    assert.ok(!grants(docs, c), `granted by default: ${callName(c)}`);
  assert.equal(envValue(collectorPod(docs).containers[0], 'CNI_BENCH_ALLOW_NETWORK_POLICY'), 'false');
  assert.equal(envValue(collectorPod(docs).containers[0], 'CNI_BENCH_ALLOW_DATAPLANE_RESTART'), 'false');
});

test('rbac.dataplaneRestart.enabled: list and delete of pods in the dataplane namespace, nothing more, and the flag', () => {
  const calls = COLLECTOR_API_CALLS.filter((x) => x.toggle === 'rbac.dataplaneRestart.enabled');
  assert.deepEqual(calls.map((c) => `${c.verb} ${c.resource} ${c.scope}`).sort(), [
    'delete pods dataplane',
    'list pods dataplane',
  ]);
  const on = render({ set: ['rbac.dataplaneRestart.enabled=true'] });
  assert.deepEqual(
    rbacRules(on).filter((r) => !rbacRules(render()).includes(r)),
    ['Role kube-system: /pods list,delete'],
  );
  for (const c of calls) assert.ok(grants(on, c), callName(c));
  const pod = collectorPod(on).containers[0];
  assert.equal(envValue(pod, 'CNI_BENCH_ALLOW_DATAPLANE_RESTART'), 'true');
  assert.equal(envValue(pod, 'CNI_BENCH_DATAPLANE_NAMESPACE'), 'kube-system');
  assert.equal(envValue(pod, 'CNI_BENCH_DATAPLANE_SELECTOR'), 'k8s-app in (kube-proxy,cilium)');
  // What the collector reads from it, and the same from flags.
  const config = loadCollectorConfig([], envOf(pod, COLLECTOR_ENV, 'collector'));
  assert.deepEqual(
    [config.allowDataplaneRestart, config.dataplaneNamespace, config.dataplaneSelector],
    [true, 'kube-system', 'k8s-app in (kube-proxy,cilium)'],
  );
  assert.equal(loadCollectorConfig(['--allow-dataplane-restart', 'true'], {}).allowDataplaneRestart, true);
  assert.equal(loadCollectorConfig([], {}).allowDataplaneRestart, false);
  assert.throws(() => loadCollectorConfig(['--dataplane-namespace', 'Kube_System'], {}), /dataplaneNamespace/);
  const elsewhere = render({
    set: ['rbac.dataplaneRestart.enabled=true', 'rbac.dataplaneRestart.namespace=cilium-system'],
  });
  for (const c of calls) {
    assert.ok(grants(elsewhere, c, 'kube-system', 'cilium-system'), callName(c));
    assert.ok(!grants(elsewhere, c), `still in kube-system: ${callName(c)}`);
  }
  assert.equal(envValue(collectorPod(elsewhere).containers[0], 'CNI_BENCH_DATAPLANE_NAMESPACE'), 'cilium-system');
  // Without rbac.create there is no grant, so the flag stays off too.
  const none = render({ set: ['rbac.create=false', 'rbac.dataplaneRestart.enabled=true'] });
  assert.equal(envValue(collectorPod(none).containers[0], 'CNI_BENCH_ALLOW_DATAPLANE_RESTART'), 'false');
});

test('RBAC toggles: all off leaves the base rules; create=false leaves none; ciliumConfig.write adds patch and update by name', () => {
  const minimal = render({ values: ['minimal-rbac.yaml'] });
  assert.deepEqual(rbacRules(minimal), [...baseRules].sort());
  for (const c of COLLECTOR_API_CALLS)
    assert.equal(grants(minimal, c), c.toggle === undefined, `${c.toggle ?? 'untoggled'}: ${callName(c)}`);
  assert.equal(all(minimal, 'Namespace').length, 0, 'no sweep namespace');
  assert.equal(envValue(collectorPod(minimal).containers[0], 'CNI_BENCH_SWEEP_NAMESPACE'), `${RELEASE}-sweep`);
  const none = render({ set: ['rbac.create=false'] });
  assert.deepEqual(
    none.filter((d) => d.apiVersion.startsWith('rbac.') || d.kind === 'Namespace'),
    [],
  );
  const write = render({ set: ['rbac.ciliumConfig.write=true', 'rbac.ciliumConfig.namespace=cilium'] });
  assert.ok(
    rbacRules(write).includes('Role cilium: /configmaps[cilium-config] get,patch,update'),
    rbacRules(write).join('\n'),
  );
  for (const c of COLLECTOR_API_CALLS.filter((x) => x.scope === 'cilium'))
    assert.ok(grants(write, c, 'cilium'), callName(c));
  // The policy conditions' opt-in: list, create and delete of networkpolicies in the release namespace, nothing more.
  const policy = render({ set: ['rbac.networkPolicy.enabled=true'] });
  assert.deepEqual(
    rbacRules(policy).filter((r) => !rbacRules(render()).includes(r)),
    [`Role ${NS}: /pods patch`, `Role ${NS}: networking.k8s.io/networkpolicies list,create,delete`],
  );
  for (const c of COLLECTOR_API_CALLS.filter((x) => x.toggle === 'rbac.networkPolicy.enabled'))
    assert.ok(grants(policy, c), callName(c));
  assert.equal(envValue(collectorPod(policy).containers[0], 'CNI_BENCH_ALLOW_NETWORK_POLICY'), 'true');
  // patch pods only with the admission policy that narrows it to the role label, bound to Deny, for this collector.
  const vap = all(policy, 'ValidatingAdmissionPolicy');
  const binding = all(policy, 'ValidatingAdmissionPolicyBinding');
  assert.equal(vap.length, 1);
  assert.equal(binding.length, 1);
  assert.deepEqual(binding[0]?.spec.validationActions, ['Deny']);
  assert.equal(binding[0]?.spec.policyName, vap[0]?.metadata.name);
  assert.match(
    JSON.stringify(vap[0]?.spec.matchConditions),
    new RegExp(`system:serviceaccount:${NS}:cni-bench-collector`),
  );
  assert.match(JSON.stringify(vap[0]?.spec.variables), /cni-bench\.io\/policy-role/);
  assert.equal(all(render(), 'ValidatingAdmissionPolicy').length, 0, 'no admission policy without the opt-in');
  // The L7 condition's opt-in: list, create and delete of ciliumnetworkpolicies there, and the same narrowed patch on pods.
  const l7 = render({ set: ['rbac.ciliumNetworkPolicy.enabled=true'] });
  assert.deepEqual(
    rbacRules(l7).filter((r) => !rbacRules(render()).includes(r)),
    [`Role ${NS}: /pods patch`, `Role ${NS}: cilium.io/ciliumnetworkpolicies list,create,delete`],
  );
  for (const c of COLLECTOR_API_CALLS.filter((x) => x.toggle === 'rbac.ciliumNetworkPolicy.enabled'))
    assert.ok(grants(l7, c), callName(c));
  assert.equal(all(l7, 'ValidatingAdmissionPolicy').length, 1, 'the narrowing comes with it');
  assert.equal(envValue(collectorPod(l7).containers[0], 'CNI_BENCH_ALLOW_CILIUM_NETWORK_POLICY'), 'true');
  assert.equal(envValue(collectorPod(policy).containers[0], 'CNI_BENCH_ALLOW_CILIUM_NETWORK_POLICY'), 'false');
  for (const docs of [minimal, write, render({ values: ['monitoring.yaml'] })]) {
    for (const rule of rbacRules(docs)) {
      assert.doesNotMatch(rule, /secrets|pods\/exec|\*/, rule);
      // Cluster-wide rules only read; a TokenReview "create" stores nothing (the API server only answers it).
      if (rule.startsWith('ClusterRole') && rule !== 'ClusterRole -: authentication.k8s.io/tokenreviews create')
        assert.match(rule, / get,list,watch$/, `cluster-wide writes: ${rule}`);
    }
  }
});

test('tls.mode generate: one Secret with a CA, the collector server certificate and the agent client certificate', () => {
  const docs = render();
  const data = one(docs, 'Secret', 'cni-bench-tls').data as Record<string, string>;
  const pem = (k: string): string => Buffer.from(data[k]!, 'base64').toString('utf8');
  const ca = new X509Certificate(pem('ca.crt'));
  const server = new X509Certificate(pem('tls.crt'));
  const client = new X509Certificate(pem('client.crt'));
  const agent = agentPod(docs);
  assert.equal(ca.ca, true);
  assert.ok(server.verify(ca.publicKey) && client.verify(ca.publicKey), 'both certificates are signed by the CA');
  assert.equal(
    server.checkHost(envValue(agent.containers[0], 'CNI_BENCH_TLS_SERVER_NAME')!),
    `cni-bench-collector.${NS}.svc`,
  );
  assert.ok(
    server.checkPrivateKey(createPrivateKey(pem('tls.key'))) &&
      client.checkPrivateKey(createPrivateKey(pem('client.key'))),
  );
  assert.match(client.subject, /CN=cni-bench-agent/);
  assert.deepEqual(volume(agent, 'tls').secret.items, [
    { key: 'ca.crt', path: 'ca.crt' },
    { key: 'client.crt', path: 'tls.crt' },
    { key: 'client.key', path: 'tls.key' },
  ]);
  assert.equal(volume(collectorPod(docs), 'tls').secret.secretName, 'cni-bench-tls');
  assert.deepEqual(
    volume(collectorPod(docs), 'tls').secret.items.map((i: Obj) => i.key),
    ['ca.crt', 'tls.crt', 'tls.key'],
  );
});

test('tls.mode provided mounts the Secrets named in values and generates none', () => {
  const docs = render({ values: ['tls-provided.yaml'] });
  assert.deepEqual(all(docs, 'Secret'), []);
  assert.equal(volume(collectorPod(docs), 'tls').secret.secretName, 'bench-collector-tls');
  assert.equal(volume(agentPod(docs), 'tls').secret.secretName, 'bench-agent-tls');
  assert.deepEqual(
    volume(agentPod(docs), 'tls').secret.items.map((i: Obj) => i.key),
    ['ca.crt', 'tls.crt', 'tls.key'],
  );
  assert.deepEqual(volume(collectorPod(docs), 'rest-token').secret, {
    secretName: 'bench-rest',
    defaultMode: 288,
    items: [{ key: 'bearer', path: 'token' }],
  });
  const shared = render({ set: ['tls.mode=provided', 'tls.existingSecret=shared-tls'] });
  assert.equal(volume(agentPod(shared), 'tls').secret.secretName, 'shared-tls', 'agents fall back to existingSecret');
  const missing = helm(templateArgs({ set: ['tls.mode=provided'] }));
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /existingSecret/);
});

test('tls.mode certManager: a self-signed CA Issuer chain and one Certificate per component, their Secrets mounted', () => {
  const docs = render({ values: ['cert-manager.yaml'] });
  for (const d of [...all(docs, 'Issuer'), ...all(docs, 'Certificate')])
    assert.equal(d.apiVersion, 'cert-manager.io/v1');
  assert.deepEqual(
    all(docs, 'Issuer')
      .map((i) => i.metadata.name)
      .sort(),
    ['cni-bench-ca', 'cni-bench-selfsigned'],
  );
  const server = one(docs, 'Certificate', 'cni-bench-collector-tls').spec;
  const client = one(docs, 'Certificate', 'cni-bench-agent-tls').spec;
  assert.ok(server.dnsNames.includes(envValue(agentPod(docs).containers[0], 'CNI_BENCH_TLS_SERVER_NAME')));
  assert.ok(server.usages.includes('server auth') && client.usages.includes('client auth'));
  assert.equal(server.duration, '720h');
  assert.equal(volume(collectorPod(docs), 'tls').secret.secretName, server.secretName);
  assert.equal(volume(agentPod(docs), 'tls').secret.secretName, client.secretName);
  assert.equal(
    all(docs, 'Secret')
      .map((s) => s.metadata.name)
      .join(),
    'cni-bench-rest-token',
    'no generated TLS Secret',
  );
  const external = render({
    values: ['cert-manager.yaml'],
    set: ['tls.certManager.issuerRef.name=corp-ca', 'tls.certManager.issuerRef.kind=ClusterIssuer'],
  });
  assert.deepEqual(all(external, 'Issuer'), []);
  for (const cert of all(external, 'Certificate'))
    assert.deepEqual(cert.spec.issuerRef, { name: 'corp-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' });
});

test('tls.mode disabled: no TLS env, volume or Secret; the liveness probe is gRPC', () => {
  const docs = render({ set: ['tls.mode=disabled'] });
  for (const c of [agentPod(docs).containers[0], collectorPod(docs).containers[0]]) {
    assert.deepEqual(
      (c.env as Obj[]).filter((e) => e.name.startsWith('CNI_BENCH_TLS_')),
      [],
      c.name,
    );
    assert.ok(!c.volumeMounts.some((m: Obj) => m.name === 'tls'), c.name);
  }
  assert.equal(loadAgentConfig([], envOf(agentPod(docs).containers[0], AGENT_ENV, 'agent')).tlsCaFile, '');
  assert.equal(
    loadCollectorConfig([], envOf(collectorPod(docs).containers[0], COLLECTOR_ENV, 'collector')).tlsCertFile,
    '',
  );
  assert.deepEqual(collectorPod(docs).containers[0].livenessProbe.grpc, { port: 7070 });
  assert.deepEqual(
    all(docs, 'Secret').map((s) => s.metadata.name),
    ['cni-bench-rest-token'],
  );
});

test('the REST token is a generated 32-character Secret the collector reads as a file', () => {
  const docs = render();
  const token = Buffer.from(one(docs, 'Secret', 'cni-bench-rest-token').data.token, 'base64').toString('utf8');
  assert.match(token, /^[A-Za-z0-9]{32}$/);
  const pod = collectorPod(docs);
  assert.equal(envValue(pod.containers[0], 'CNI_BENCH_REST_TOKEN_FILE'), '/etc/cni-bench/rest/token');
  assert.deepEqual(volume(pod, 'rest-token').secret.items, [{ key: 'token', path: 'token' }]);
});

test('monitoring.yaml: ServiceMonitor, PodMonitor, the chart NetworkPolicies and a PVC store', () => {
  const docs = render({ values: ['monitoring.yaml'] });
  const svc = one(docs, 'Service', 'cni-bench-collector');
  const podLabels = one(docs, 'Deployment', 'cni-bench-collector').spec.template.metadata.labels;
  const agentLabels = one(docs, 'DaemonSet', 'cni-bench-agent').spec.selector.matchLabels;
  const sm = one(docs, 'ServiceMonitor', 'cni-bench-collector');
  const pm = one(docs, 'PodMonitor', 'cni-bench-collector');
  assert.equal(sm.apiVersion, 'monitoring.coreos.com/v1');
  assert.equal(sm.metadata.labels.release, 'kube-prometheus-stack');
  for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) assert.equal(svc.metadata.labels[k], v, k);
  assert.deepEqual([sm.spec.endpoints[0].port, sm.spec.endpoints[0].path], ['http', '/metrics']);
  for (const [k, v] of Object.entries(pm.spec.selector.matchLabels)) assert.equal(podLabels[k], v, k);
  assert.equal(pm.spec.podMetricsEndpoints[0].interval, '15s');

  const values = parse(readFileSync(join(valuesDir, 'monitoring.yaml'), 'utf8')) as Obj;
  const [grpcRule, httpRule, collectorMetrics, ...moreCollector] = one(docs, 'NetworkPolicy', 'cni-bench-collector')
    .spec.ingress;
  assert.deepEqual(grpcRule, {
    from: [{ podSelector: { matchLabels: agentLabels } }],
    ports: [{ port: 'grpc', protocol: 'TCP' }],
  });
  assert.deepEqual(httpRule.from, [
    { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
  ]);
  assert.deepEqual(collectorMetrics, {
    from: values.networkPolicy.metricsFrom,
    ports: [{ port: 'http', protocol: 'TCP' }],
  });
  assert.deepEqual(moreCollector, []);
  assert.deepEqual(one(docs, 'NetworkPolicy', 'cni-bench-agent').spec.ingress, [
    { from: [{ podSelector: { matchLabels: agentLabels } }] },
    { from: values.networkPolicy.metricsFrom, ports: [{ port: 'health', protocol: 'TCP' }] },
  ]);

  const pvc = one(docs, 'PersistentVolumeClaim', 'cni-bench-collector-store');
  assert.deepEqual([pvc.spec.storageClassName, pvc.spec.resources.requests.storage], ['fast-ssd', '5Gi']);
  assert.deepEqual(volume(collectorPod(docs), 'store').persistentVolumeClaim, {
    claimName: 'cni-bench-collector-store',
  });
});

test('networkPolicy.metricsFrom: by default Prometheus pods reach only the metrics ports; [] lets no scraper in', () => {
  const prometheus = [
    { namespaceSelector: {}, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } },
  ];
  const docs = render({ set: ['networkPolicy.enabled=true'] });
  const agentPorts = (agentPod(docs).containers[0].ports as Obj[]).map((p) => p.name);
  const collectorPorts = (collectorPod(docs).containers[0].ports as Obj[]).map((p) => p.name);
  const rulesFor = (name: string) =>
    (one(docs, 'NetworkPolicy', name).spec.ingress as Obj[]).filter(
      (r) => JSON.stringify(r.from) === JSON.stringify(prometheus),
    );
  assert.deepEqual(rulesFor('cni-bench-agent'), [{ from: prometheus, ports: [{ port: 'health', protocol: 'TCP' }] }]);
  assert.deepEqual(rulesFor('cni-bench-collector'), [{ from: prometheus, ports: [{ port: 'http', protocol: 'TCP' }] }]);
  // The named ports exist on the pods (a NetworkPolicy naming a missing port opens nothing).
  assert.ok(agentPorts.includes('health') && collectorPorts.includes('http'), `${agentPorts} ${collectorPorts}`);

  const closed = render({ set: ['networkPolicy.enabled=true', 'networkPolicy.metricsFrom=null'] });
  assert.equal(one(closed, 'NetworkPolicy', 'cni-bench-agent').spec.ingress.length, 1, 'agents from agents only');
  assert.equal(
    one(closed, 'NetworkPolicy', 'cni-bench-collector').spec.ingress.length,
    2,
    'gRPC from agents and HTTP from httpNamespaceSelector only',
  );
  assert.equal(all(render(), 'NetworkPolicy').length, 0, 'no policy unless enabled');
});

test('scheduling.yaml: image, placement and pod metadata reach both components; narrower capabilities', () => {
  const docs = render({ values: ['scheduling.yaml'] });
  const values = parse(readFileSync(join(valuesDir, 'scheduling.yaml'), 'utf8')) as Obj;
  for (const [component, pod, kind] of [
    ['agent', agentPod(docs), 'DaemonSet'],
    ['collector', collectorPod(docs), 'Deployment'],
  ] as const) {
    const v = values[component];
    assert.equal(pod.priorityClassName, v.priorityClassName, component);
    assert.deepEqual(pod.imagePullSecrets, [{ name: 'registry-credentials' }], component);
    assert.equal(pod.containers[0].image, 'registry.example.com/cni-bench:0.1.0-rc1', component);
    assert.equal(pod.containers[0].imagePullPolicy, 'Always', component);
    assert.deepEqual(
      one(docs, kind, `cni-bench-${component}`).spec.template.metadata.annotations,
      v.podAnnotations,
      component,
    );
    for (const k of ['nodeSelector', 'affinity', 'tolerations'] as const)
      if (v[k]) assert.deepEqual(pod[k], v[k], `${component} ${k}`);
  }
  const agent = agentPod(docs).containers[0];
  assert.deepEqual(agent.securityContext.capabilities.add, ['NET_ADMIN', 'NET_RAW', 'BPF', 'PERFMON', 'SYS_PTRACE']);
  assert.equal(agent.securityContext.allowPrivilegeEscalation, false, 'allowed without SYS_ADMIN');
  assert.deepEqual(loadAgentConfig([], envOf(agent, AGENT_ENV, 'agent')).processNames, ['cilium-agent', 'kube-proxy']);
  assert.deepEqual(one(docs, 'PodDisruptionBudget', 'cni-bench-collector').spec.maxUnavailable, 1);
});

test('another release name prefixes every name and the agents follow the collector', () => {
  const docs = render({ release: 'perf', namespace: 'lab' });
  const agent = podOf(docs, 'DaemonSet', 'perf-agent').containers[0];
  assert.equal(envValue(agent, 'CNI_BENCH_COLLECTOR'), 'perf-collector.lab.svc:7070');
  assert.equal(
    envValue(podOf(docs, 'Deployment', 'perf-collector').containers[0], 'CNI_BENCH_SWEEP_NAMESPACE'),
    'perf-sweep',
  );
  one(docs, 'Service', 'perf-collector');
  one(docs, 'Namespace', 'perf-sweep');
});

test('the schema rejects wrong types and unknown keys at any depth, naming the key', async (t) => {
  const cases: [string, RegExp][] = [
    ['agent.tolerations=notalist', /tolerations/],
    ['agent.healthPort=notaport', /healthPort/],
    ['bogusKey=1', /bogusKey/],
    ['collector.persistence.bogusNested=1', /bogusNested/],
    ['agent.affinity.nodeAffinity.deepBogus=1', /deepBogus/],
    ['tls.mode=sometimes', /mode/],
    ['agent.capabilities[0]=CAP_NET_ADMIN', /capabilities/],
    ['rbac.scaleSweep.enabled=maybe', /enabled/],
    ['rbac.clusterDescription.read=maybe', /read/],
    ['networkPolicy.metricsFrom[0].bogusPeer=1', /bogusPeer/],
    ['agent.nodeFlags[0]=jitless', /nodeFlags/],
    ['networkPolicy.metricsFrom[0].ipBlock.cidr=monitoring', /cidr/],
  ];
  for (const [set, names] of cases) {
    await t.test(set, () => {
      const out = helm(templateArgs({ set: [set] }));
      assert.notEqual(out.code, 0, `helm template --set ${set} rendered:\n${out.stdout.slice(0, 400)}`);
      assert.match(out.stderr, /schema/);
      assert.match(out.stderr, names);
    });
  }
});

test('values.schema.json closes every object with properties and types every map', () => {
  const schema = JSON.parse(readFileSync(join(chart, 'values.schema.json'), 'utf8')) as Obj;
  assert.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) {
      for (const [i, n] of node.entries()) walk(n, `${path}[${i}]`);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const n = node as Obj;
    if (n.type === 'object' && path !== '/properties/global') {
      if (n.properties) assert.equal(n.additionalProperties, false, `${path}: additionalProperties must be false`);
      else assert.ok(n.additionalProperties?.type !== undefined, `${path}: a map must type its values`);
    }
    for (const [k, v] of Object.entries(n)) walk(v, `${path}/${k}`);
  };
  walk(schema, '');
});

test('the chart README documents every value in values.yaml and nothing else', () => {
  const readme = readFileSync(join(chart, 'README.md'), 'utf8');
  const documented = [...readme.matchAll(/^\| `([\w.]+)` \|/gm)].map((m) => m[1]!);
  const paths = (o: Obj, prefix = ''): string[] =>
    Object.entries(o).flatMap(([k, v]) => {
      const p = `${prefix}${k}`;
      const inner = v && typeof v === 'object' && !Array.isArray(v) ? paths(v as Obj, `${p}.`) : [];
      return [p, ...inner];
    });
  const known = new Set(paths(defaults));
  for (const d of documented) assert.ok(known.has(d), `README documents ${d}, which values.yaml does not have`);
  const leaves = [...known].filter((p) => ![...known].some((q) => q.startsWith(`${p}.`)));
  for (const leaf of leaves)
    assert.ok(
      documented.some((d) => leaf === d || leaf.startsWith(`${d}.`)),
      `README does not document ${leaf}`,
    );
});
