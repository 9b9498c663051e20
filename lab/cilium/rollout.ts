/**
 * The lab's stand-in for the DaemonSet controller of Cilium's agents, so a
 * collector in its own process (Kubernetes mode, as in a cluster) can do what
 * it does in a cluster: `kubectl rollout restart daemonset/cilium` and wait
 * for `rollout status`. The lab writes a `cilium` DaemonSet in Cilium's
 * namespace (no controller runs for it: kube-controller-manager runs only
 * node-IPAM and service accounts) whose status says every node runs the
 * current template. When its template changes (a new generation), the lab
 * marks the rollout under way, restarts its agents with cilium-config as it
 * is now (CiliumLab.restartAgents: each node ready, its endpoints back and its
 * pods connecting through the canary Services before the next), and only
 * then writes the new generation observed, every pod updated and available.
 */
import type { AppsV1Api, V1DaemonSet, V1DaemonSetStatus } from '@kubernetes/client-node';
import type { Logger } from '../../core/log.js';
import { LAB_LABEL } from './objects.js';

export const CILIUM_DAEMONSET = 'cilium';
const POLL_MS = 1000;

/** Pure: the DaemonSet object (a real pod template the apiserver validates; no controller acts on it). */
export function ciliumDaemonSet(namespace: string, labId: string): V1DaemonSet {
  const labels = { 'k8s-app': 'cilium' };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: CILIUM_DAEMONSET, namespace, labels: { ...labels, [LAB_LABEL]: labId } },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'cilium-agent', image: 'cilium-agent (cni-bench lab: a process per node)' }] },
      },
    },
  };
}

/** Pure: the status once `generation` runs on all `nodes` (rolled out), or while its rollout is under way. */
export function daemonSetStatus(generation: number, nodes: number, rolledOut: boolean): V1DaemonSetStatus {
  const done = rolledOut ? nodes : 0;
  return {
    observedGeneration: generation,
    desiredNumberScheduled: nodes,
    currentNumberScheduled: nodes,
    numberMisscheduled: 0,
    numberReady: done,
    numberAvailable: done,
    updatedNumberScheduled: done,
  };
}

export class LabCiliumRollout {
  private timer: NodeJS.Timeout | undefined;
  private rolling: Promise<void> | undefined;
  private observed = 0;

  constructor(
    private readonly apps: AppsV1Api,
    private readonly namespace: string,
    private readonly labId: string,
    private readonly nodes: number,
    private readonly restart: () => Promise<void>,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const ds = await this.apps.createNamespacedDaemonSet({
      namespace: this.namespace,
      body: ciliumDaemonSet(this.namespace, this.labId),
    });
    this.observed = ds.metadata?.generation ?? 1;
    await this.writeStatus(this.observed, true);
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
  }

  private async writeStatus(generation: number, rolledOut: boolean): Promise<void> {
    const ds = await this.apps.readNamespacedDaemonSet({ name: CILIUM_DAEMONSET, namespace: this.namespace });
    await this.apps.replaceNamespacedDaemonSetStatus({
      name: CILIUM_DAEMONSET,
      namespace: this.namespace,
      body: { ...ds, status: daemonSetStatus(generation, this.nodes, rolledOut) },
    });
  }

  private async poll(): Promise<void> {
    if (this.rolling) return;
    const ds = await this.apps
      .readNamespacedDaemonSet({ name: CILIUM_DAEMONSET, namespace: this.namespace })
      .catch(() => undefined);
    const generation = ds?.metadata?.generation ?? 0;
    if (generation <= this.observed) return;
    this.rolling = (async () => {
      const began = Date.now();
      try {
        await this.writeStatus(generation, false);
        await this.restart();
        await this.writeStatus(generation, true);
        this.observed = generation;
        this.log.info('cilium lab: daemonset/cilium rolled out', { generation, ms: Date.now() - began });
      } catch (err) {
        // The rollout stays unfinished: the caller's rollout status times out, naming the counts.
        this.log.error('cilium lab: daemonset/cilium rollout failed', { generation, error: (err as Error).message });
        this.observed = generation;
      }
    })();
    await this.rolling;
    this.rolling = undefined;
  }

  /** Stops watching; a rollout under way finishes first. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.rolling;
  }
}
