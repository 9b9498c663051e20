/**
 * The flags every remote command shares (where the collector is and how to
 * prove who we are) and the one function that turns them into a client:
 * `--collector URL`, or else a kubeconfig and a release name, through which
 * the in-cluster collector is found and reached (kube-connect.ts).
 */
import { readFileSync } from 'node:fs';
import { CniBenchError } from '../../core/errors.js';
import { flagError, stringFlag } from '../../core/flags.js';
import { CollectorClient } from './client.js';
import { connectThroughKube } from './kube-connect.js';
import { DEFAULT_RELEASE } from './kube-release.js';

export const remoteFlags = {
  collector: stringFlag({
    help: "the collector's REST address (http://HOST:PORT or https://HOST:PORT)",
    value: 'URL',
    default: undefined,
    env: 'CNI_BENCH_COLLECTOR',
  }),
  'token-file': stringFlag({
    help: "file holding the collector's operator token (the chart's Secret key 'token')",
    value: 'FILE',
    default: undefined,
    env: 'CNI_BENCH_TOKEN_FILE',
  }),
  'ca-file': stringFlag({
    help: "PEM CA bundle that signs the collector's REST certificate (https)",
    value: 'FILE',
    default: undefined,
    env: 'CNI_BENCH_CA_FILE',
  }),
  kubeconfig: stringFlag({
    help: 'kubeconfig for reaching the in-cluster collector when --collector is not given (a list separated by : is merged, as kubectl does)',
    value: 'FILE',
    default: undefined,
    defaultText: '~/.kube/config',
    env: 'KUBECONFIG',
  }),
  context: stringFlag({
    help: "the kubeconfig's context to use",
    value: 'NAME',
    default: undefined,
    defaultText: 'its current-context',
  }),
  release: stringFlag({
    help: "the chart's release whose collector to reach through the apiserver (port-forward to its pod; the operator token read from the release's Secret)",
    value: 'NAME',
    default: undefined,
    defaultText: DEFAULT_RELEASE,
    env: 'CNI_BENCH_RELEASE',
  }),
  namespace: stringFlag({
    help: "the release's namespace",
    value: 'NS',
    default: undefined,
    defaultText: "the context's namespace, else default",
    env: 'CNI_BENCH_RELEASE_NAMESPACE',
  }),
};

export interface RemoteValues {
  collector: string | undefined;
  'token-file': string | undefined;
  'ca-file': string | undefined;
  kubeconfig: string | undefined;
  context: string | undefined;
  release: string | undefined;
  namespace: string | undefined;
}

/**
 * Notes for --help of every remote command: how the collector is found. One
 * text, so every command says the same.
 */
export const REMOTE_NOTES = [
  `Reaching the collector: --collector URL when given; otherwise the kubeconfig (--kubeconfig, KUBECONFIG, ~/.kube/config; --context) and the release (--release, default ${DEFAULT_RELEASE}; --namespace): the CLI finds the release's collector Service, port-forwards to its pod through the apiserver, reads the operator token from the release's Secret (unless --token-file) and, when the REST API serves TLS, the CA from its TLS Secret (unless --ca-file). RBAC needed in the release's namespace: list services and pods, get and create pods/portforward, get the token Secret (and the TLS Secret with TLS); see docs/cli-cluster.md.`,
];

function readSmallFile(flag: string, path: string): Buffer {
  try {
    const b = readFileSync(path);
    if (b.length > 1024 * 1024) throw flagError(flag, `'${path}' is larger than 1 MiB`);
    return b;
  } catch (err) {
    if (err instanceof CniBenchError) throw err;
    throw flagError(
      flag,
      `cannot read '${path}' (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      err,
    );
  }
}

/** The base URL as given, checked: http or https, a host, no credentials, query or fragment. */
export function parseCollectorUrl(text: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw flagError('--collector', `not a URL: '${text.slice(0, 200)}'`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw flagError('--collector', `must be http:// or https://, got '${u.protocol}'`);
  if (u.username || u.password) throw flagError('--collector', 'must not carry credentials (use --token-file)');
  if (u.search || u.hash) throw flagError('--collector', 'must not carry a query or fragment');
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}/`;
}

/** True when the flags ask for a collector (for commands whose default is the local store: report, compare). */
export function wantsRemote(v: RemoteValues): boolean {
  return Boolean(v.collector || v.release || v.context);
}

/**
 * A client for the collector the flags name: --collector URL, or else the
 * release found through the kubeconfig. Call `close()` on it when done (it may
 * hold a port-forward).
 */
export async function connect(v: RemoteValues): Promise<CollectorClient> {
  const token = v['token-file'] ? readSmallFile('--token-file', v['token-file']).toString('utf8').trim() : undefined;
  if (v['token-file'] && !token) throw flagError('--token-file', `'${v['token-file']}' is empty`);
  const ca = v['ca-file'] ? readSmallFile('--ca-file', v['ca-file']) : undefined;
  if (!v.collector) {
    if (v.release !== undefined && !/^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$/.test(v.release))
      throw flagError(
        '--release',
        `not a release name (lower-case letters, digits and -), got '${v.release.slice(0, 64)}'`,
      );
    return connectThroughKube(v, { ...(token ? { token } : {}), ...(ca ? { ca } : {}) });
  }
  const url = parseCollectorUrl(v.collector);
  return new CollectorClient({ url, ...(token ? { token } : {}), ...(ca ? { ca } : {}) });
}

/** Runs `fn` with a client for the flags' collector and closes it (its port-forward) afterwards. */
export async function withCollector<T>(v: RemoteValues, fn: (c: CollectorClient) => Promise<T>): Promise<T> {
  const client = await connect(v);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
