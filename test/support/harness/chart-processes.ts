/**
 * The collector and agents as the chart runs them, on this host: each
 * container's environment taken from the rendered chart (values and fieldRefs
 * resolved as the kubelet would), its Secret volumes written to a folder with
 * the data of the release's real Secrets, and its mount paths rewritten to
 * that folder. Substitutes, named in each test that uses this: listeners on
 * 127.0.0.1 and free ports instead of 0.0.0.0:7070/8080 (a shared machine);
 * the collector's in-cluster config replaced by a kubeconfig holding a token
 * of its ServiceAccount; the agents' projected token issued with TokenRequest
 * bound to their pod, as the kubelet would.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}
interface Volume {
  name: string;
  secret?: { secretName: string; items?: { key: string; path: string }[] };
  projected?: { sources: { serviceAccountToken?: { audience?: string; expirationSeconds?: number; path: string } }[] };
}
interface PodTemplate {
  spec: {
    serviceAccountName?: string;
    containers: { env?: EnvVar[]; volumeMounts?: { name: string; mountPath: string }[] }[];
    volumes?: Volume[];
  };
}

export interface PodFacts {
  namespace: string;
  podName: string;
  podUid: string;
  nodeName: string;
  podIp: string;
}

/** The pod template of the chart's `kind` object named `name`. */
export function podTemplate(objects: KubernetesObject[], kind: string, name: string): PodTemplate {
  const o = objects.find((x) => x.kind === kind && x.metadata?.name === name) as
    | (KubernetesObject & { spec: { template: PodTemplate } })
    | undefined;
  if (!o) throw new Error(`the chart renders no ${kind} ${name}`);
  return o.spec.template;
}

/**
 * Writes the container's volumes under `dir` (Secrets from the apiserver,
 * projected tokens from TokenRequest bound to the pod) and returns its
 * environment with fieldRefs resolved and mount paths pointing there.
 */
export async function containerEnv(
  admin: KubeConfig,
  tpl: PodTemplate,
  pod: PodFacts,
  dir: string,
): Promise<Record<string, string>> {
  const core = admin.makeApiClient(CoreV1Api);
  const container = tpl.spec.containers[0];
  if (!container) throw new Error('no container');
  const mounts = new Map<string, string>();
  for (const m of container.volumeMounts ?? []) {
    const v = tpl.spec.volumes?.find((x) => x.name === m.name);
    if (!v || !(v.secret || v.projected)) continue;
    const local = join(dir, m.name);
    mkdirSync(local, { recursive: true });
    if (v.secret) {
      const s = await core.readNamespacedSecret({ name: v.secret.secretName, namespace: pod.namespace });
      const items = v.secret.items ?? Object.keys(s.data ?? {}).map((k) => ({ key: k, path: k }));
      for (const it of items)
        writeFileSync(join(local, it.path), Buffer.from(s.data?.[it.key] ?? '', 'base64'), { mode: 0o600 });
    }
    for (const src of v.projected?.sources ?? []) {
      const t = src.serviceAccountToken;
      if (!t) continue;
      const r = await core.createNamespacedServiceAccountToken({
        name: tpl.spec.serviceAccountName ?? 'default',
        namespace: pod.namespace,
        body: {
          spec: {
            audiences: [t.audience ?? 'https://kubernetes.default.svc.cluster.local'],
            expirationSeconds: t.expirationSeconds ?? 3600,
            boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.podName, uid: pod.podUid },
          },
        },
      });
      writeFileSync(join(local, t.path), r.status?.token ?? '', { mode: 0o600 });
    }
    mounts.set(m.mountPath, local);
  }
  const fields: Record<string, string> = {
    'metadata.namespace': pod.namespace,
    'metadata.name': pod.podName,
    'spec.nodeName': pod.nodeName,
    'status.podIP': pod.podIp,
    'status.hostIP': pod.podIp,
  };
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    let value = e.value ?? (e.valueFrom?.fieldRef ? fields[e.valueFrom.fieldRef.fieldPath] : undefined);
    if (value === undefined) throw new Error(`env ${e.name}: cannot resolve ${JSON.stringify(e.valueFrom)}`);
    for (const [from, to] of mounts) if (value.startsWith(`${from}/`)) value = to + value.slice(from.length);
    env[e.name] = value;
  }
  return env;
}
