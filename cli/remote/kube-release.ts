/**
 * Finding a chart release's collector from a kubeconfig: its Service (by the
 * chart's labels), a ready pod behind it and the container port of its `http`
 * port, the operator token from the release's Secret and, when the REST API
 * serves TLS, the CA and the name its certificate carries. The chart writes
 * where these live as annotations on the Service (deploy/helm: collector-service.yaml);
 * a Service without them (an older chart) gets the chart's default names.
 * Every refusal is a coded error that says what is missing or which RBAC verb
 * on which object would allow it.
 */
import type { CoreV1Api, V1Pod, V1Service } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

/** The chart's default release name (`helm install cni-bench-agent ...`). */
export const DEFAULT_RELEASE = 'cni-bench-agent';

/** Service annotations the chart sets (collector-service.yaml), read here. */
export const ANNOTATIONS = {
  tokenSecret: 'cni-bench.io/rest-token-secret',
  tokenKey: 'cni-bench.io/rest-token-key',
  scheme: 'cni-bench.io/rest-scheme',
  tlsSecret: 'cni-bench.io/tls-secret',
  serverName: 'cni-bench.io/server-name',
} as const;

export interface ReleaseTarget {
  namespace: string;
  service: string;
  /** A Running, Ready collector pod the Service selects. */
  pod: string;
  /** The pod's container port behind the Service's `http` port. */
  podPort: number;
  scheme: 'http' | 'https';
  tokenSecret: string;
  tokenKey: string;
  /** Secret with ca.crt (https only). */
  tlsSecret?: string;
  /** The name the collector's certificate carries (https only). */
  serverName?: string;
}

/** The HTTP status of a client-node ApiException (it carries `code`), or undefined. */
function statusOf(err: unknown): number | undefined {
  const c = (err as { code?: unknown })?.code;
  return typeof c === 'number' ? c : undefined;
}

/** A refused or failed API call as a coded error; 403 says which verb is needed on what. */
export function apiError(err: unknown, what: string, rbac: string, hint = ''): CniBenchError {
  const status = statusOf(err);
  if (status === 403)
    return new CniBenchError(
      ErrorCodes.FORBIDDEN,
      `kubernetes: cannot ${what}: forbidden; needs RBAC ${rbac}${hint ? `; ${hint}` : ''}`,
      {
        cause: err,
        details: { status, rbac },
      },
    );
  if (status === 401)
    return new CniBenchError(
      ErrorCodes.UNAUTHENTICATED,
      `kubernetes: cannot ${what}: the apiserver did not accept the kubeconfig's credentials (401)`,
      { cause: err, details: { status } },
    );
  const why = status
    ? `HTTP ${status}`
    : ((err as NodeJS.ErrnoException)?.code ?? (err as Error)?.message ?? String(err));
  return new CniBenchError(ErrorCodes.KUBERNETES, `kubernetes: cannot ${what} (${why})`, {
    cause: err,
    details: { status },
  });
}

const COLLECTOR_SELECTOR = 'app.kubernetes.io/name=cni-bench-collector';

/** The release's collector Service; E_NOT_FOUND naming the namespaces where collectors were seen, when any. */
async function findService(core: CoreV1Api, release: string, namespace: string): Promise<V1Service> {
  const selector = `${COLLECTOR_SELECTOR},app.kubernetes.io/instance=${release}`;
  const list = await core.listNamespacedService({ namespace, labelSelector: selector }).catch((err: unknown) => {
    throw apiError(err, `list Services in namespace '${namespace}'`, `'list' on services in namespace '${namespace}'`);
  });
  const svc = list.items[0];
  if (svc) return svc;
  const elsewhere = await core
    .listServiceForAllNamespaces({ labelSelector: COLLECTOR_SELECTOR })
    .then((l) =>
      l.items.map((s) => `${s.metadata?.labels?.['app.kubernetes.io/instance']} in ${s.metadata?.namespace}`),
    )
    .catch(() => [] as string[]);
  throw new CniBenchError(
    ErrorCodes.NOT_FOUND,
    `--release: no release '${release}' in namespace '${namespace}' (no Service labelled ${selector})${
      elsewhere.length ? `; cni-bench collectors seen: ${elsewhere.join(', ')} (use --release and --namespace)` : ''
    }`,
    { details: { field: '--release', release, namespace } },
  );
}

function ready(p: V1Pod): boolean {
  return (
    p.status?.phase === 'Running' &&
    !p.metadata?.deletionTimestamp &&
    (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

/** The container port a Service port's targetPort names (a number, or a named container port). */
export function containerPort(pod: V1Pod, target: number | string | undefined, fallback: number): number {
  if (typeof target === 'number') return target;
  if (target === undefined || target === '') return fallback;
  if (/^\d+$/.test(target)) return Number(target);
  for (const c of pod.spec?.containers ?? [])
    for (const p of c.ports ?? []) if (p.name === target) return p.containerPort;
  throw new CniBenchError(
    ErrorCodes.NOT_FOUND,
    `kubernetes: pod '${pod.metadata?.name}' has no container port named '${target}' (the collector Service's http targetPort)`,
    { details: { pod: pod.metadata?.name, port: target } },
  );
}

/** Where the release's collector is and how to reach it (no Secret read yet). */
export async function findRelease(core: CoreV1Api, release: string, namespace: string): Promise<ReleaseTarget> {
  const svc = await findService(core, release, namespace);
  const name = svc.metadata?.name ?? '';
  const a = svc.metadata?.annotations ?? {};
  const http = svc.spec?.ports?.find((p) => p.name === 'http');
  if (!http)
    throw new CniBenchError(ErrorCodes.NOT_FOUND, `kubernetes: Service ${namespace}/${name} has no port named 'http'`, {
      details: { service: name },
    });
  const selector = Object.entries(svc.spec?.selector ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  if (!selector)
    throw new CniBenchError(ErrorCodes.NOT_FOUND, `kubernetes: Service ${namespace}/${name} has no selector`, {
      details: { service: name },
    });
  const pods = await core.listNamespacedPod({ namespace, labelSelector: selector }).catch((err: unknown) => {
    throw apiError(err, `list pods in namespace '${namespace}'`, `'list' on pods in namespace '${namespace}'`);
  });
  const pod = pods.items.find(ready);
  if (!pod)
    throw new CniBenchError(
      ErrorCodes.NOT_FOUND,
      `kubernetes: release '${release}' has no Running and Ready collector pod in '${namespace}' (${pods.items.length} pod(s) match ${selector}; see kubectl -n ${namespace} describe pods -l ${selector})`,
      { details: { release, namespace, pods: pods.items.length } },
    );
  const prefix = name.replace(/-collector$/, '');
  const scheme = a[ANNOTATIONS.scheme] === 'https' ? 'https' : 'http';
  return {
    namespace,
    service: name,
    pod: pod.metadata?.name ?? '',
    podPort: containerPort(pod, http.targetPort as number | string | undefined, http.port),
    scheme,
    tokenSecret: a[ANNOTATIONS.tokenSecret] || `${prefix}-rest-token`,
    tokenKey: a[ANNOTATIONS.tokenKey] || 'token',
    ...(scheme === 'https'
      ? {
          tlsSecret: a[ANNOTATIONS.tlsSecret] || `${prefix}-tls`,
          serverName: a[ANNOTATIONS.serverName] || `${name}.${namespace}.svc`,
        }
      : {}),
  };
}

/** One key of a Secret, decoded; 403 names the `get` it needs on that Secret. */
export async function readSecretKey(
  core: CoreV1Api,
  namespace: string,
  name: string,
  key: string,
  instead: string,
): Promise<Buffer> {
  const s = await core.readNamespacedSecret({ name, namespace }).catch((err: unknown) => {
    if (statusOf(err) === 404)
      throw new CniBenchError(ErrorCodes.NOT_FOUND, `kubernetes: Secret ${namespace}/${name} not found; ${instead}`, {
        cause: err,
        details: { secret: name, namespace },
      });
    throw apiError(
      err,
      `read Secret ${namespace}/${name}`,
      `'get' on secrets (resourceNames: ['${name}']) in namespace '${namespace}'`,
      instead,
    );
  });
  const v = s.data?.[key];
  if (!v)
    throw new CniBenchError(ErrorCodes.NOT_FOUND, `kubernetes: Secret ${namespace}/${name} has no key '${key}'`, {
      details: { secret: name, key },
    });
  return Buffer.from(v, 'base64');
}
