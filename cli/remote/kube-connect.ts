/**
 * The in-cluster collector reached from a kubeconfig and a release name, as a
 * user who ran `helm install` has them: load the kubeconfig (a list merged as
 * kubectl does), find the release (kube-release.ts), read the operator token
 * and the CA from its Secrets unless given, and open a port-forward to the
 * collector pod (port-forward.ts). The client gets the tunnel's local URL,
 * the certificate's name to verify, and the tunnel to close.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { flagError } from '../../core/flags.js';
import { CollectorClient } from './client.js';
import { DEFAULT_RELEASE, findRelease, readSecretKey } from './kube-release.js';
import { openTunnel } from './port-forward.js';

export interface KubeFlags {
  kubeconfig: string | undefined;
  context: string | undefined;
  release: string | undefined;
  namespace: string | undefined;
}

/** The kubeconfig the flags name (a `:` list merged in order), with --context applied. */
export function loadKubeconfig(v: Pick<KubeFlags, 'kubeconfig' | 'context'>): KubeConfig {
  const files = (v.kubeconfig ?? '').split(delimiter).filter(Boolean);
  if (!files.length) {
    const home = join(homedir(), '.kube', 'config');
    if (!existsSync(home))
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        `--collector: none given, and no kubeconfig to find the in-cluster collector with (no --kubeconfig, KUBECONFIG or ${home}); give --collector URL or --kubeconfig FILE`,
        { details: { field: '--collector' } },
      );
    files.push(home);
  }
  const kc = new KubeConfig();
  files.forEach((f, i) => {
    if (!existsSync(f)) throw flagError('--kubeconfig', `no such file '${f}'`);
    try {
      if (i === 0) kc.loadFromFile(f);
      else {
        const more = new KubeConfig();
        more.loadFromFile(f);
        kc.mergeConfig(more, true);
      }
    } catch (err) {
      throw flagError('--kubeconfig', `cannot load '${f}' (${(err as Error).message})`, err);
    }
  });
  if (v.context) {
    if (!kc.getContextObject(v.context))
      throw flagError(
        '--context',
        `no context '${v.context}' in the kubeconfig (it has: ${kc
          .getContexts()
          .map((c) => c.name)
          .join(', ')})`,
      );
    kc.setCurrentContext(v.context);
  }
  if (!kc.getCurrentCluster())
    throw flagError('--context', `the kubeconfig's context '${kc.getCurrentContext()}' names no cluster`);
  return kc;
}

/** Finds the release, reads its token and CA (unless given) and opens the port-forward. */
export async function connectThroughKube(
  v: KubeFlags,
  given: { token?: string; ca?: Buffer },
): Promise<CollectorClient> {
  const kc = loadKubeconfig(v);
  const namespace = v.namespace || kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';
  const release = v.release || DEFAULT_RELEASE;
  const core = kc.makeApiClient(CoreV1Api);
  const t = await findRelease(core, release, namespace);
  const instead = 'or pass --token-file';
  const token = given.token ?? (await readSecretKey(core, namespace, t.tokenSecret, t.tokenKey, instead)).toString();
  const ca =
    t.scheme === 'https'
      ? (given.ca ?? (await readSecretKey(core, namespace, t.tlsSecret ?? '', 'ca.crt', 'or pass --ca-file')))
      : undefined;
  const tunnel = await openTunnel(kc, namespace, t.pod, t.podPort);
  return new CollectorClient({
    url: `${t.scheme}://127.0.0.1:${tunnel.port}/`,
    token: token.trim(),
    ...(ca ? { ca } : {}),
    ...(t.serverName ? { serverName: t.serverName } : {}),
    via: `a port-forward to pod ${namespace}/${t.pod}:${t.podPort} (release ${release}, Service ${t.service})`,
    viaError: tunnel.lastError,
    close: tunnel.close,
  });
}
