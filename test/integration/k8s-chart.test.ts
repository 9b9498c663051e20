/**
 * The Helm chart against a real control plane (etcd, kube-apiserver with RBAC,
 * controller-manager, scheduler, kwok fake nodes): every manifest rendered for
 * every values file passes a server-side dry run; `helm install` puts the
 * collector Deployment in place and a DaemonSet pod on every fake node, and
 * `helm uninstall` leaves nothing; and the collector's ServiceAccount is
 * allowed exactly what the collector calls and refused what it must never do,
 * as the apiserver's own authorizer answers (SubjectAccessReview).
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
} from '@kubernetes/client-node';
import { type ApiCall, COLLECTOR_API_CALLS } from '../../collector/kubernetes/permissions.js';
import { CHART_DIR, createAll, ensureNamespace, helm, kubeConfigFrom, renderChart } from '../support/harness/apply.js';
import { type ControlPlane, startControlPlane } from '../support/harness/control-plane.js';
import { addKwokNodes } from '../support/harness/kwok-nodes.js';
import { waitFor } from '../support/helpers/procs.js';

const VALUES_DIR = fileURLToPath(new URL('../../../test/fixtures/helm-values/', import.meta.url));
const NS = 'cni-bench';
const RELEASE = 'cni-bench-agent';
const COLLECTOR_USER = `system:serviceaccount:${NS}:cni-bench-collector`;
let cp: ControlPlane;
let admin: KubeConfig;
let nodes: string[];

/**
 * CRDs for the optional kinds the chart renders (ServiceMonitor, PodMonitor,
 * cert-manager Issuer and Certificate), registered in the real apiserver so a
 * dry run can resolve them. Their schemas are permissive (we do not vendor the
 * operators' CRDs), so for these kinds the dry run checks group, version,
 * kind, metadata and namespacing, not their spec fields.
 */
function permissiveCrd(group: string, kind: string, plural: string): KubernetesObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  } as KubernetesObject;
}

before(async () => {
  cp = await startControlPlane({ controllers: true, kwok: true });
  admin = kubeConfigFrom(cp.adminKubeconfig);
  nodes = await addKwokNodes(cp.adminKubeconfig, 3);
  const crds = [
    permissiveCrd('monitoring.coreos.com', 'ServiceMonitor', 'servicemonitors'),
    permissiveCrd('monitoring.coreos.com', 'PodMonitor', 'podmonitors'),
    permissiveCrd('monitoring.coreos.com', 'PrometheusRule', 'prometheusrules'),
    permissiveCrd('cert-manager.io', 'Issuer', 'issuers'),
    permissiveCrd('cert-manager.io', 'Certificate', 'certificates'),
  ];
  await createAll(admin, crds);
  const ext = admin.makeApiClient(ApiextensionsV1Api);
  await waitFor(
    'CRDs established',
    async () => {
      const list = await ext.listCustomResourceDefinition();
      return (
        list.items.filter((c) => c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True'))
          .length >= crds.length
      );
    },
    30_000,
    250,
  );
});

after(async () => {
  await cp?.stop();
});

function valuesFiles(): string[] {
  return readdirSync(VALUES_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
}

test('every manifest rendered with every values file passes a server-side dry run', async () => {
  const files = valuesFiles();
  assert.ok(files.length >= 3, `values files in ${VALUES_DIR}: ${files.join(', ')}`);
  await ensureNamespace(admin, NS);
  const api = KubernetesObjectApi.makeApiClient(admin);
  const created = new Set<string>();
  for (const file of ['(defaults)', ...files]) {
    // --skip-tests: `helm test` hooks exist only while `helm test` runs (test/integration/k8s-helm-test.test.ts).
    const objects = renderChart(RELEASE, NS, [], file === '(defaults)' ? [] : [join(VALUES_DIR, file)], [
      '--skip-tests',
    ]);
    // Namespaces are created for real (a dry-run namespace cannot hold dry-run objects).
    for (const ns of objects.filter((o) => o.kind === 'Namespace')) {
      await ensureNamespace(admin, ns.metadata?.name ?? '');
      created.add(ns.metadata?.name ?? '');
    }
    for (const o of objects.filter((x) => x.kind !== 'Namespace')) {
      await api.create(o, undefined, 'All').catch((err: { body?: unknown }) => {
        throw new Error(
          `${file}: dry run of ${o.kind} ${o.metadata?.name} refused: ${typeof err.body === 'string' ? err.body : JSON.stringify(err.body)}`,
        );
      });
    }
  }
  // The chart's own namespaces must be the release's when it is installed: remove the ones made here.
  const core = admin.makeApiClient(CoreV1Api);
  for (const name of created) await core.deleteNamespace({ name });
  await waitFor(
    'the dry run namespaces to go',
    async () => {
      const left = (await core.listNamespace()).items.filter((n) => created.has(n.metadata?.name ?? ''));
      return left.length === 0;
    },
    60_000,
    250,
  );
});

async function releaseObjects(): Promise<string[]> {
  const sel = `app.kubernetes.io/instance=${RELEASE}`;
  const core = admin.makeApiClient(CoreV1Api);
  const apps = admin.makeApiClient(AppsV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const names = (kind: string, items: { metadata?: { namespace?: string; name?: string } }[]) =>
    items.map((i) => `${kind} ${i.metadata?.namespace ?? ''}/${i.metadata?.name}`);
  return [
    ...names('Pod', (await core.listPodForAllNamespaces({ labelSelector: sel })).items),
    ...names('Service', (await core.listServiceForAllNamespaces({ labelSelector: sel })).items),
    ...names('Secret', (await core.listSecretForAllNamespaces({ labelSelector: sel })).items),
    ...names('ServiceAccount', (await core.listServiceAccountForAllNamespaces({ labelSelector: sel })).items),
    ...names('Namespace', (await core.listNamespace({ labelSelector: sel })).items),
    ...names('DaemonSet', (await apps.listDaemonSetForAllNamespaces({ labelSelector: sel })).items),
    ...names('Deployment', (await apps.listDeploymentForAllNamespaces({ labelSelector: sel })).items),
    ...names('Role', (await rbac.listRoleForAllNamespaces({ labelSelector: sel })).items),
    ...names('RoleBinding', (await rbac.listRoleBindingForAllNamespaces({ labelSelector: sel })).items),
    ...names('ClusterRole', (await rbac.listClusterRole({ labelSelector: sel })).items),
    ...names('ClusterRoleBinding', (await rbac.listClusterRoleBinding({ labelSelector: sel })).items),
  ];
}

/** `helm upgrade` of the installed release with its values kept and `set` added, waited for. */
function upgradeWith(set: string): void {
  helm(cp, [
    'upgrade',
    RELEASE,
    CHART_DIR,
    '--namespace',
    NS,
    '--reuse-values',
    '--set',
    set,
    '--wait',
    '--timeout',
    '120s',
  ]);
}

test('helm install: collector Deployment, an agent pod on every fake node; least privilege; helm uninstall leaves nothing', async (t) => {
  helm(cp, [
    'install',
    RELEASE,
    fileURLToPath(new URL('../../../deploy/helm/cni-bench-agent', import.meta.url)),
    '--namespace',
    NS,
    '--create-namespace',
    '--wait',
    '--timeout',
    '120s',
  ]);
  const apps = admin.makeApiClient(AppsV1Api);
  const core = admin.makeApiClient(CoreV1Api);
  const ds = await apps.readNamespacedDaemonSet({ name: 'cni-bench-agent', namespace: NS });
  assert.equal(ds.spec?.template.spec?.hostNetwork ?? false, false, 'agents are on the pod network');
  const deploy = await apps.readNamespacedDeployment({ name: 'cni-bench-collector', namespace: NS });
  assert.equal(deploy.status?.availableReplicas, 1);
  const pods = await waitFor(
    'an agent pod Running on every kwok node',
    async () => {
      const list = await core.listNamespacedPod({
        namespace: NS,
        labelSelector: 'app.kubernetes.io/name=cni-bench-agent',
      });
      const running = list.items.filter((p) => p.status?.phase === 'Running');
      return running.length === nodes.length ? running : undefined;
    },
    60_000,
    500,
  );
  assert.deepEqual(pods.map((p) => p.spec?.nodeName).sort(), [...nodes].sort());
  assert.equal(pods[0]?.spec?.automountServiceAccountToken, false, 'agents carry no API token');

  await t.test('the authorizer allows every call the collector makes', async () => {
    const sweepNs =
      (deploy.spec?.template.spec?.containers[0]?.env ?? []).find((e) => e.name === 'CNI_BENCH_SWEEP_NAMESPACE')
        ?.value ?? '';
    const scopeNs = {
      own: NS,
      sweep: sweepNs,
      cilium: 'kube-system',
      'kube-system': 'kube-system',
      cluster: undefined,
    } as const;
    const refused: string[] = [];
    const optIn = new Set(['rbac.ciliumConfig.write', 'rbac.networkPolicy.enabled']);
    for (const c of COLLECTOR_API_CALLS.filter((x) => !optIn.has(x.toggle ?? ''))) {
      if (!(await allowed(c, scopeNs[c.scope]))) refused.push(describe(c, scopeNs[c.scope]));
    }
    assert.deepEqual(refused, [], 'calls the chart does not grant');
  });

  await t.test('the authorizer refuses what the collector must never do', async () => {
    const never: [Omit<ApiCall, 'by'>, string | undefined][] = [
      [{ verb: 'get', group: '', resource: 'secrets', scope: 'own' }, NS],
      [{ verb: 'list', group: '', resource: 'secrets', scope: 'cilium' }, 'kube-system'],
      [{ verb: 'get', group: '', resource: 'secrets', scope: 'cluster' }, 'default'],
      [{ verb: 'create', group: '', resource: 'pods/exec', scope: 'own' }, NS],
      [{ verb: 'create', group: '', resource: 'pods', scope: 'own' }, NS],
      [{ verb: 'delete', group: '', resource: 'services', scope: 'cluster' }, 'default'],
      [{ verb: 'delete', group: '', resource: 'services', scope: 'cilium' }, 'kube-system'],
      [{ verb: 'delete', group: 'discovery.k8s.io', resource: 'endpointslices', scope: 'cluster' }, 'default'],
      [{ verb: 'delete', group: '', resource: 'nodes', scope: 'cluster' }, undefined],
      [{ verb: 'patch', group: '', resource: 'nodes', scope: 'cluster' }, undefined],
      [
        { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings', scope: 'cluster' },
        undefined,
      ],
      [{ verb: 'get', group: '', resource: 'configmaps', scope: 'cilium', name: 'coredns' }, 'kube-system'],
      [{ verb: 'get', group: '', resource: 'configmaps', scope: 'kube-system', name: 'kubeadm-config' }, 'kube-system'],
      [{ verb: 'list', group: '', resource: 'configmaps', scope: 'kube-system' }, 'kube-system'],
      [{ verb: 'watch', group: '', resource: 'configmaps', scope: 'kube-system' }, 'kube-system'],
      [{ verb: 'patch', group: '', resource: 'configmaps', scope: 'kube-system', name: 'kube-proxy' }, 'kube-system'],
      [{ verb: 'get', group: '', resource: 'configmaps', scope: 'own', name: 'kube-proxy' }, NS],
      [{ verb: 'patch', group: '', resource: 'configmaps', scope: 'cilium', name: 'cilium-config' }, 'kube-system'],
      [{ verb: 'delete', group: '', resource: 'namespaces', scope: 'cluster' }, undefined],
      [{ verb: 'create', group: 'apps', resource: 'daemonsets', scope: 'own' }, NS],
      // Policy conditions are opt-in (rbac.networkPolicy.enabled=false by default).
      [{ verb: 'create', group: 'networking.k8s.io', resource: 'networkpolicies', scope: 'own' }, NS],
      [{ verb: 'delete', group: 'networking.k8s.io', resource: 'networkpolicies', scope: 'own' }, NS],
    ];
    const granted: string[] = [];
    for (const [c, ns] of never) if (await allowed({ ...c, by: '' }, ns)) granted.push(describe({ ...c, by: '' }, ns));
    assert.deepEqual(granted, [], 'must be refused');
  });

  await t.test('rbac.clusterDescription.read=false takes back exactly the kube-proxy ConfigMap read', async () => {
    const kubeProxy = COLLECTOR_API_CALLS.find((c) => c.toggle === 'rbac.clusterDescription.read');
    assert.ok(kubeProxy, 'permissions.ts lists the kube-proxy ConfigMap read');
    assert.equal(await allowed(kubeProxy, 'kube-system'), true);
    upgradeWith('rbac.clusterDescription.read=false');
    await waitFor(
      'the authorizer to refuse the kube-proxy ConfigMap',
      async () => !(await allowed(kubeProxy, 'kube-system')),
      10_000,
      250,
    );
    const cilium = COLLECTOR_API_CALLS.find((c) => c.toggle === 'rbac.ciliumConfig.read')!;
    assert.equal(await allowed(cilium, 'kube-system'), true, 'the cilium-config read stays');
  });

  await t.test(
    'rbac.networkPolicy.enabled=true grants list, create and delete of networkpolicies in the release namespace, nothing more',
    async () => {
      const policyCalls = COLLECTOR_API_CALLS.filter((c) => c.toggle === 'rbac.networkPolicy.enabled');
      assert.deepEqual(policyCalls.map((c) => c.verb).sort(), ['create', 'delete', 'list']);
      for (const c of policyCalls) assert.equal(await allowed(c, NS), false, `before the opt-in: ${describe(c, NS)}`);
      upgradeWith('rbac.networkPolicy.enabled=true');
      await waitFor(
        'the authorizer to allow the policy calls',
        async () => (await Promise.all(policyCalls.map((c) => allowed(c, NS)))).every(Boolean),
        10_000,
        250,
      );
      const np = { group: 'networking.k8s.io', resource: 'networkpolicies', by: '' };
      const never: [ApiCall, string | undefined][] = [
        ...policyCalls.flatMap((c): [ApiCall, string][] => [
          [c, 'default'],
          [c, 'kube-system'],
          [{ ...c, scope: 'sweep' }, `${RELEASE}-sweep`],
        ]),
        [{ ...np, verb: 'patch', scope: 'own' }, NS],
        [{ ...np, verb: 'get', scope: 'own' }, NS],
        [{ ...np, verb: 'watch', scope: 'own' }, NS],
        [{ ...np, verb: 'deletecollection', scope: 'own' }, NS],
        [{ ...np, verb: 'list', scope: 'cluster' }, undefined],
        [{ verb: 'patch', group: '', resource: 'pods', scope: 'own', by: '' }, NS],
      ];
      const granted: string[] = [];
      for (const [c, ns] of never) if (await allowed(c, ns)) granted.push(describe(c, ns));
      assert.deepEqual(granted, [], 'must stay refused with the opt-in');
      const deploy = await admin
        .makeApiClient(AppsV1Api)
        .readNamespacedDeployment({ name: 'cni-bench-collector', namespace: NS });
      const env = deploy.spec?.template.spec?.containers[0]?.env ?? [];
      assert.equal(env.find((e) => e.name === 'CNI_BENCH_ALLOW_NETWORK_POLICY')?.value, 'true');
    },
  );

  // The label selector below must see the release before it can prove the release gone.
  const installed = await releaseObjects();
  for (const kind of [
    'Pod',
    'Service',
    'Secret',
    'ServiceAccount',
    'Namespace',
    'DaemonSet',
    'Deployment',
    'Role',
    'RoleBinding',
    'ClusterRole',
    'ClusterRoleBinding',
  ]) {
    assert.ok(
      installed.some((o) => o.startsWith(`${kind} `)),
      `no ${kind} of the release found by label: ${installed.join(', ')}`,
    );
  }
  process.stdout.write(`# helm install: ${installed.length} labelled objects\n`);
  helm(cp, ['uninstall', RELEASE, '--namespace', NS, '--wait', '--timeout', '120s']);
  const left = await waitFor(
    'nothing of the release left',
    async () => {
      const l = await releaseObjects();
      return l.length === 0 ? l : undefined;
    },
    90_000,
    500,
  ).catch(async () => releaseObjects());
  assert.deepEqual(left, [], 'objects left after helm uninstall');
});

async function allowed(c: ApiCall, namespace: string | undefined): Promise<boolean> {
  const [resource, subresource] = c.resource.split('/');
  const review = await admin.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: COLLECTOR_USER,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'],
        resourceAttributes: {
          verb: c.verb,
          group: c.group,
          resource,
          ...(subresource ? { subresource } : {}),
          ...(namespace ? { namespace } : {}),
          ...(c.name ? { name: c.name } : {}),
        },
      },
    },
  });
  return review.status?.allowed === true;
}

function describe(c: ApiCall, ns: string | undefined): string {
  return `${c.verb} ${c.group || 'core'}/${c.resource}${c.name ? `/${c.name}` : ''}${ns ? ` in ${ns}` : ' (cluster)'}`;
}
