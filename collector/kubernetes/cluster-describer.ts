/**
 * Reads what the cluster description needs from the API server, at start-up
 * and again before each run, and keeps the last result: GET /version, the Node
 * list (the inventory's node watch keeps it), kube-system/kube-proxy and
 * cilium-config (one GET each, by name). Cheap: three requests, all through the
 * Pacer. A 404 is "not there"; a 403 becomes a note naming the grant; nothing
 * here throws, so a cluster the collector may not fully read still gets
 * described as far as it can be.
 */
import { CoreV1Api, type KubeConfig, type V1Node, VersionApi } from '@kubernetes/client-node';
import { isCniBenchError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { type ClusterDetection, type ConfigMapRead, detectCluster } from './cluster-detect.js';
import { KUBE_PROXY_CONFIGMAP } from './kube-proxy-mode.js';
import type { Pacer } from './pacer.js';

/** The inventory's part this needs: the current Nodes (its watch's cache). */
export interface NodeSource {
  nodeObjects(): Promise<readonly V1Node[]>;
}

export interface ClusterDescriberOptions {
  ciliumNamespace: string;
  log: Logger;
  now?: () => number;
}

/** The chart values that grant each read (deploy/helm/cni-bench-agent, collector/kubernetes/permissions.ts). */
export const DESCRIPTION_GRANTS = {
  kubeProxy: `get configmaps/${KUBE_PROXY_CONFIGMAP.name} in ${KUBE_PROXY_CONFIGMAP.namespace}, chart value rbac.clusterDescription.read`,
  cilium: (ns: string) => `get configmaps/cilium-config in ${ns}, chart value rbac.ciliumConfig.read`,
} as const;

export class ClusterDescriber {
  private last: ClusterDetection = { notes: ['not detected yet'], evidence: [] };
  private detectedAt = 0;
  private running: Promise<ClusterDetection> | undefined;
  private readonly core: CoreV1Api;
  private readonly now: () => number;

  constructor(
    private readonly kc: KubeConfig,
    private readonly pacer: Pacer,
    private readonly nodes: NodeSource,
    private readonly opts: ClusterDescriberOptions,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.now = opts.now ?? Date.now;
  }

  /** The last detection and when it was made (0: never). */
  current(): { description: ClusterDetection; detectedAtMs: number } {
    return { description: this.last, detectedAtMs: this.detectedAt };
  }

  /** Detects again unless the last detection is younger than `maxAgeMs`; concurrent callers share one detection. Never throws. */
  async refresh(maxAgeMs = 0): Promise<ClusterDetection> {
    if (this.detectedAt && this.now() - this.detectedAt < maxAgeMs) return this.last;
    this.running ??= this.detect().finally(() => (this.running = undefined));
    return this.running;
  }

  private async detect(): Promise<ClusterDetection> {
    const [version, nodes, kubeProxy, ciliumConfig] = await Promise.all([
      this.version(),
      this.nodeList(),
      this.configMap(KUBE_PROXY_CONFIGMAP.namespace, KUBE_PROXY_CONFIGMAP.name, DESCRIPTION_GRANTS.kubeProxy),
      this.configMap(this.opts.ciliumNamespace, 'cilium-config', DESCRIPTION_GRANTS.cilium(this.opts.ciliumNamespace)),
    ]);
    const detected = detectCluster({
      version,
      nodes: nodes.items,
      kubeProxy,
      ciliumConfig,
      ciliumNamespace: this.opts.ciliumNamespace,
    });
    if (nodes.failure) detected.notes.push(nodes.failure);
    this.last = detected;
    this.detectedAt = this.now();
    if (detected.notes.length) this.opts.log.warn('cluster description incomplete', { notes: detected.notes });
    return detected;
  }

  private async version(): Promise<string | undefined> {
    try {
      return (await this.pacer.run('GET /version', () => this.kc.makeApiClient(VersionApi).getCode())).gitVersion;
    } catch (err) {
      this.opts.log.warn('cannot read the Kubernetes version', { error: (err as Error).message });
      return undefined;
    }
  }

  private async nodeList(): Promise<{ items: readonly V1Node[]; failure?: string }> {
    try {
      return { items: await this.nodes.nodeObjects() };
    } catch (err) {
      return { items: [], failure: `nodes not listed: ${(err as Error).message}` };
    }
  }

  private async configMap(namespace: string, name: string, grant: string): Promise<ConfigMapRead> {
    try {
      const cm = await this.pacer.run(`get configmap ${namespace}/${name}`, () =>
        this.core.readNamespacedConfigMap({ name, namespace }),
      );
      return { state: 'found', data: cm.data ?? {} };
    } catch (err) {
      const status = isCniBenchError(err) ? err.details.status : undefined;
      if (status === 404) return { state: 'not-found' };
      if (status === 403) return { state: 'forbidden', grant };
      return { state: 'failed', message: (err as Error).message };
    }
  }
}
