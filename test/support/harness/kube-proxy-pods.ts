/**
 * The harness's real kube-proxy processes as the pods of a kube-proxy
 * DaemonSet, so a collector can restart one the way it does in a cluster (it
 * deletes the node's pod; collector/kubernetes/dataplane-restart.ts). No
 * kubelet or DaemonSet controller runs here, so this plays both, the way
 * lab/cilium/rollout.ts plays the DaemonSet controller for Cilium:
 * - a `kube-proxy` DaemonSet in kube-system (kubeadm's labels, k8s-app=kube-proxy),
 *   and per node a Pod of it (generated name, owner reference, spec.nodeName),
 *   Running and Ready;
 * - a pod being deleted (the apiserver sets its deletionTimestamp and waits
 *   for the kubelet, as for any pod bound to a node): that node's real
 *   kube-proxy is stopped with SIGTERM and started again with its rules left
 *   (RealKubeProxy.restart, as a container restart leaves the node's
 *   iptables), the old pod object removed (grace period 0, as the kubelet
 *   confirms), and a new pod created and written Running and Ready once the
 *   process runs again.
 * A substitute for kubelet and controller, named as one: the process restart
 * is real, the pod objects are written by this file.
 */
import type { AppsV1Api, CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { RealKubeProxy } from './kube-proxy.js';

export const KUBE_PROXY_LABELS = Object.freeze({ 'k8s-app': 'kube-proxy' });
const NAMESPACE = 'kube-system';
const POLL_MS = 100;

export interface KubeProxyPodEvent {
  node: string;
  deleted: string;
  created: string;
  /** Wall clock: the deletion seen, the process running again, the new pod written Ready. */
  seenMs: number;
  restartedMs: number;
  readyMs: number;
}

export class KubeProxyPods {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private dsUid = '';
  readonly events: KubeProxyPodEvent[] = [];
  readonly errors: string[] = [];

  constructor(
    private readonly core: CoreV1Api,
    private readonly apps: AppsV1Api,
    /** Each node's real kube-proxy, by node name. */
    private readonly proxies: ReadonlyMap<string, RealKubeProxy>,
  ) {}

  async start(): Promise<void> {
    await this.core
      .createNamespacedServiceAccount({ namespace: NAMESPACE, body: { metadata: { name: 'kube-proxy' } } })
      .catch((err: { code?: number }) => {
        if (err.code !== 409) throw err;
      });
    const ds = await this.apps.createNamespacedDaemonSet({
      namespace: NAMESPACE,
      body: {
        metadata: { name: 'kube-proxy', labels: { ...KUBE_PROXY_LABELS } },
        spec: {
          selector: { matchLabels: { ...KUBE_PROXY_LABELS } },
          template: {
            metadata: { labels: { ...KUBE_PROXY_LABELS } },
            spec: { containers: [{ name: 'kube-proxy', image: 'kube-proxy (harness: a process per lab node)' }] },
          },
        },
      },
    });
    this.dsUid = ds.metadata?.uid ?? '';
    for (const node of this.proxies.keys()) await this.createReady(node);
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    while (this.busy) await new Promise((r) => setTimeout(r, 50));
    await this.apps.deleteNamespacedDaemonSet({ name: 'kube-proxy', namespace: NAMESPACE }).catch(() => undefined);
    const pods = await this.list().catch(() => []);
    for (const p of pods)
      await this.core
        .deleteNamespacedPod({ name: p.metadata?.name ?? '', namespace: NAMESPACE, gracePeriodSeconds: 0 })
        .catch(() => undefined);
  }

  /** The node's current pod (not being deleted). */
  async current(node: string): Promise<V1Pod | undefined> {
    return (await this.list()).find((p) => p.spec?.nodeName === node && !p.metadata?.deletionTimestamp);
  }

  private async list(): Promise<V1Pod[]> {
    const l = await this.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: 'k8s-app=kube-proxy' });
    return l.items;
  }

  private async createReady(node: string): Promise<string> {
    const pod = await this.core.createNamespacedPod({
      namespace: NAMESPACE,
      body: {
        metadata: {
          generateName: 'kube-proxy-',
          labels: { ...KUBE_PROXY_LABELS },
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'kube-proxy', uid: this.dsUid, controller: true },
          ],
        },
        spec: {
          nodeName: node,
          serviceAccountName: 'kube-proxy',
          automountServiceAccountToken: false,
          containers: [{ name: 'kube-proxy', image: 'kube-proxy (harness: a process per lab node)' }],
        },
      },
    });
    const now = new Date();
    await this.core.replaceNamespacedPodStatus({
      name: pod.metadata?.name ?? '',
      namespace: NAMESPACE,
      body: {
        ...pod,
        status: {
          phase: 'Running',
          startTime: now,
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
        },
      } as V1Pod,
    });
    return pod.metadata?.name ?? '';
  }

  private async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      for (const p of await this.list()) {
        const node = p.spec?.nodeName ?? '';
        const kp = this.proxies.get(node);
        if (!p.metadata?.deletionTimestamp || !kp) continue;
        const seenMs = Date.now();
        await kp.restart();
        const restartedMs = Date.now();
        await this.core.deleteNamespacedPod({
          name: p.metadata.name ?? '',
          namespace: NAMESPACE,
          gracePeriodSeconds: 0,
        });
        const created = await this.createReady(node);
        this.events.push({
          node,
          deleted: p.metadata.name ?? '',
          created,
          seenMs,
          restartedMs,
          readyMs: Date.now(),
        });
      }
    } catch (err) {
      this.errors.push((err as Error).message);
    } finally {
      this.busy = false;
    }
  }
}
