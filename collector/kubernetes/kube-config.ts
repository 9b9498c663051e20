/**
 * Which Kubernetes API the collector talks to, from its config: the pod's
 * service account ('in-cluster'), a kubeconfig file ('kubeconfig'), whichever
 * is present ('auto': in-cluster when KUBERNETES_SERVICE_HOST is set, else the
 * kubeconfig when one is named), or none ('off', and 'auto' with neither).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { CollectorConfig } from '../config.js';
import { reuseConnections } from './connections.js';

export type KubeSource = 'in-cluster' | 'kubeconfig' | 'none';

/** Pure: which source the config and environment select. */
export function kubeSource(
  config: Pick<CollectorConfig, 'kubernetes' | 'kubeconfig'>,
  env: NodeJS.ProcessEnv,
): KubeSource {
  switch (config.kubernetes) {
    case 'off':
      return 'none';
    case 'in-cluster':
      return 'in-cluster';
    case 'kubeconfig':
      if (!config.kubeconfig)
        throw new CniBenchError(
          ErrorCodes.VALIDATION,
          "invalid collector config: kubeconfig: required when kubernetes is 'kubeconfig'",
          { details: { field: 'kubeconfig' } },
        );
      return 'kubeconfig';
    case 'auto':
      if (env.KUBERNETES_SERVICE_HOST) return 'in-cluster';
      return config.kubeconfig ? 'kubeconfig' : 'none';
  }
}

export function loadKubeConfig(
  config: Pick<CollectorConfig, 'kubernetes' | 'kubeconfig'>,
  env: NodeJS.ProcessEnv = process.env,
): KubeConfig | undefined {
  const source = kubeSource(config, env);
  if (source === 'none') return undefined;
  const kc = new KubeConfig();
  try {
    if (source === 'in-cluster') kc.loadFromCluster();
    else kc.loadFromFile(config.kubeconfig);
  } catch (err) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `invalid collector config: kubeconfig: cannot load ${source === 'in-cluster' ? 'the in-cluster service account' : `'${config.kubeconfig}'`}: ${(err as Error).message}`,
      {
        cause: err,
        details: { field: 'kubeconfig' },
      },
    );
  }
  return reuseConnections(kc);
}
