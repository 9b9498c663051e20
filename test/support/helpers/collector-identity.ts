/**
 * The collector's identity in a lab's apiserver as the chart makes it in a
 * cluster: the chart's Namespaces, ServiceAccount, RBAC and admission policy (rendered with
 * `sets`, namespaces the lab already made kept), the sweep namespace, and a
 * kubeconfig with a TokenRequest token for the collector's ServiceAccount.
 */
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { createAll, kubeConfigFrom, renderChart, serviceAccountKubeconfig } from '../harness/apply.js';
import type { ControlPlane } from '../harness/control-plane.js';

export async function chartCollectorIdentity(
  cp: ControlPlane,
  release: string,
  namespace: string,
  sets: string[] = [],
): Promise<{ kubeconfig: string; sweepNamespace: string }> {
  const admin = kubeConfigFrom(cp.adminKubeconfig);
  const core = admin.makeApiClient(CoreV1Api);
  const existing = new Set((await core.listNamespace()).items.map((n) => n.metadata?.name));
  const rendered = renderChart(release, namespace, sets);
  const kinds = new Set([
    'Namespace',
    'ServiceAccount',
    'Role',
    'RoleBinding',
    'ClusterRole',
    'ClusterRoleBinding',
    // rbac.networkPolicy.enabled: what narrows the collector's patch on pods.
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
  ]);
  await createAll(
    admin,
    rendered.filter(
      (o: KubernetesObject) => kinds.has(o.kind ?? '') && !(o.kind === 'Namespace' && existing.has(o.metadata?.name)),
    ),
  );
  const deployment = rendered.find((o) => o.kind === 'Deployment') as {
    spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
  };
  const sweepNamespace =
    deployment.spec.template.spec.containers[0]?.env.find((e) => e.name === 'CNI_BENCH_SWEEP_NAMESPACE')?.value ?? '';
  await core.createNamespace({ body: { metadata: { name: sweepNamespace } } }).catch((err: { code?: number }) => {
    if (err.code !== 409) throw err;
  });
  return { kubeconfig: await serviceAccountKubeconfig(cp, namespace, 'cni-bench-collector'), sweepNamespace };
}
