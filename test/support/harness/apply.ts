/**
 * Test support against the harness apiserver: render the Helm chart with the
 * real helm binary, create what it renders, and act as a ServiceAccount with a
 * real token from the TokenRequest API (so RBAC is the chart's, not admin's).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, type KubernetesObject, KubernetesObjectApi } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { ControlPlane } from './control-plane.js';
import { toolPath } from './tools.js';

export const CHART_DIR = fileURLToPath(new URL('../../../../deploy/helm/cni-bench-agent', import.meta.url));

export function kubeConfigFrom(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** `helm template` of the chart with `--set` pairs and values files; returns the parsed objects. */
export function renderChart(
  release: string,
  namespace: string,
  sets: string[] = [],
  valuesFiles: string[] = [],
  extra: string[] = [],
): KubernetesObject[] {
  const args = [
    'template',
    release,
    CHART_DIR,
    '--namespace',
    namespace,
    ...valuesFiles.flatMap((f) => ['-f', f]),
    ...sets.flatMap((s) => ['--set', s]),
    ...extra,
  ];
  const out = execFileSync(toolPath('helm'), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseAllDocuments(out)
    .map((d) => d.toJS() as KubernetesObject | null)
    .filter((o): o is KubernetesObject => Boolean(o?.kind));
}

/** Creates objects in order (namespaces first), as admin. */
export async function createAll(kc: KubeConfig, objects: KubernetesObject[], dryRun = false): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  const order = (o: KubernetesObject) => (o.kind === 'Namespace' ? 0 : o.kind === 'CustomResourceDefinition' ? 1 : 2);
  for (const o of [...objects].sort((a, b) => order(a) - order(b))) {
    try {
      await api.create(o, undefined, dryRun ? 'All' : undefined, 'cni-bench-test');
    } catch (err) {
      const body = (err as { body?: unknown }).body;
      throw new Error(
        `create ${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}: ${typeof body === 'string' ? body : JSON.stringify(body ?? (err as Error).message)}`,
        { cause: err },
      );
    }
  }
}

export async function ensureNamespace(kc: KubeConfig, name: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  try {
    await core.createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

/** A kubeconfig that authenticates as ServiceAccount namespace/name with a token the apiserver issued. */
export async function serviceAccountKubeconfig(cp: ControlPlane, namespace: string, name: string): Promise<string> {
  const core = kubeConfigFrom(cp.adminKubeconfig).makeApiClient(CoreV1Api);
  const tr = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600 } },
  });
  const token = tr.status?.token;
  if (!token) throw new Error(`no token issued for ${namespace}/${name}`);
  const path = join(cp.dir, `sa-${namespace}-${name}.kubeconfig`);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'harness', cluster: { server: cp.server, 'certificate-authority': cp.caCert } }],
    users: [{ name: 'sa', user: { token } }],
    contexts: [{ name: 'harness', context: { cluster: 'harness', user: 'sa', namespace } }],
    'current-context': 'harness',
  };
  writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
  return path;
}

const RBAC_KINDS = new Set(['Namespace', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);

/**
 * Creates what the chart renders for the collector's identity (its namespaces,
 * ServiceAccounts, Roles and bindings) and returns a kubeconfig with a real token
 * for the collector's ServiceAccount, and the sweep namespace the chart gives it.
 */
export async function installCollectorIdentity(
  cp: ControlPlane,
  release: string,
  namespace: string,
): Promise<{ kubeconfig: string; sweepNamespace: string }> {
  const admin = kubeConfigFrom(cp.adminKubeconfig);
  await ensureNamespace(admin, namespace);
  const rendered = renderChart(release, namespace);
  await createAll(
    admin,
    rendered.filter((o) => RBAC_KINDS.has(o.kind ?? '')),
  );
  const deployment = rendered.find((o) => o.kind === 'Deployment') as {
    spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
  };
  const sweepNamespace =
    deployment.spec.template.spec.containers[0]?.env.find((e) => e.name === 'CNI_BENCH_SWEEP_NAMESPACE')?.value ?? '';
  if (!sweepNamespace) throw new Error('the chart sets no CNI_BENCH_SWEEP_NAMESPACE for the collector');
  return { kubeconfig: await serviceAccountKubeconfig(cp, namespace, 'cni-bench-collector'), sweepNamespace };
}

/** Runs `helm` with argument arrays against the harness. */
export function helm(cp: ControlPlane, args: string[]): string {
  return execFileSync(toolPath('helm'), [...args, '--kubeconfig', cp.adminKubeconfig], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
