/**
 * A disruption phase's dataplane-restart on a cluster: the client node's
 * dataplane agent (its kube-proxy or cilium-agent pod, found by the node's
 * name and the DaemonSet's labels) deleted as `kubectl delete pod` does, so
 * its DaemonSet recreates it, then the new pod waited for until it runs Ready
 * on that node. Opt-in only (chart value rbac.dataplaneRestart.enabled, flag
 * --allow-dataplane-restart): the grant it needs, list and delete of pods in
 * the dataplane's namespace, cannot be narrowed by name because DaemonSet pod
 * names are generated. Polls with list (no watch grant); a refusal by the
 * authorizer fails the event before anything was deleted, naming the verb.
 */
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { sleep } from '../../core/sleep.js';
import type { KubernetesServiceFrontend } from './frontend.js';
import { type Pacer, statusOf } from './pacer.js';

/** The DaemonSet labels of kubeadm's kube-proxy and of Cilium's agent (both use k8s-app). */
export const DEFAULT_DATAPLANE_SELECTOR = 'k8s-app in (kube-proxy,cilium)';

/** Why a collector without the opt-in refuses the event (before the run starts). */
export const DATAPLANE_RESTART_REFUSAL =
  'needs the opt-in to delete the dataplane agent pod of the client node: helm upgrade with --set rbac.dataplaneRestart.enabled=true (the collector flag --allow-dataplane-restart=true, CNI_BENCH_ALLOW_DATAPLANE_RESTART; grants list and delete of pods in the dataplane namespace); docs/disruption.md';

export interface DataplaneRestartOptions {
  /** The dataplane's namespace (kube-system). */
  namespace: string;
  /** Label selector of the dataplane DaemonSet's pods. */
  selector: string;
  log: Logger;
  /** Give up waiting for the new pod after this long. */
  readyTimeoutMs?: number;
  /** Between two lists while waiting (the timeline's bins are 100 ms). */
  pollMs?: number;
}

/** Pure: Running with its Ready condition True. */
export function podReady(pod: V1Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

/**
 * Pure: the one pod to delete on `nodeName` among `pods` (the selector's
 * list): not already terminating, and owned by a DaemonSet (deleting a static
 * pod's mirror restarts nothing). Throws naming what was found otherwise.
 */
export function pickDataplanePod(pods: readonly V1Pod[], nodeName: string, where: string): V1Pod {
  const onNode = pods.filter((p) => p.spec?.nodeName === nodeName && !p.metadata?.deletionTimestamp);
  const owned = onNode.filter((p) => (p.metadata?.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet'));
  const names = (list: readonly V1Pod[]) => list.map((p) => p.metadata?.name).join(', ');
  if (owned.length === 1) return owned[0] as V1Pod;
  if (owned.length > 1)
    throw new CniBenchError(
      ErrorCodes.CONFLICT,
      `dataplane-restart: ${owned.length} dataplane pods on node '${nodeName}' (${names(owned)}) match ${where}; narrow the collector's --dataplane-selector (chart value rbac.dataplaneRestart.selector) to the one that translates Services`,
    );
  throw new CniBenchError(
    ErrorCodes.NOT_FOUND,
    onNode.length
      ? `dataplane-restart: ${names(onNode)} on node '${nodeName}' is not a DaemonSet's pod (a static pod's mirror: deleting it restarts nothing)`
      : `dataplane-restart: no pod matching ${where} on node '${nodeName}'`,
  );
}

/** A 403 from the authorizer, said as the call it refused: nothing was done. */
function refused(err: unknown, verb: string, namespace: string): Error {
  if (statusOf((err as { cause?: unknown }).cause ?? err).status !== 403) return err as Error;
  return new CniBenchError(
    ErrorCodes.FORBIDDEN,
    `dataplane-restart: the authorizer refused ${verb} pods in namespace ${namespace}; nothing was deleted (grant it with rbac.dataplaneRestart.enabled=true): ${(err as Error).message}`,
    { cause: err },
  );
}

export class DataplaneRestarter {
  constructor(
    private readonly core: CoreV1Api,
    private readonly pacer: Pacer,
    private readonly o: DataplaneRestartOptions,
  ) {}

  private get where(): string {
    return `'${this.o.selector}' in ${this.o.namespace}`;
  }

  private async list(nodeName: string, signal?: AbortSignal): Promise<V1Pod[]> {
    const { namespace, selector } = this.o;
    try {
      const list = await this.pacer.run(
        `list pods ${namespace} (${selector})`,
        () =>
          this.core.listNamespacedPod({
            namespace,
            labelSelector: selector,
            fieldSelector: `spec.nodeName=${nodeName}`,
          }),
        signal,
      );
      return list.items;
    } catch (err) {
      throw refused(err, 'list', namespace);
    }
  }

  /**
   * Deletes the node's dataplane pod (its uid as precondition, so a pod that
   * was already replaced is never deleted) and resolves once a new one runs
   * Ready there. Times are ms from the call: `deletedMs` (the API accepted the
   * delete), `oldGoneMs` (the old pod object gone), `readyMs` (the new pod
   * Ready).
   */
  async restart(nodeName: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const began = Date.now();
    const old = pickDataplanePod(await this.list(nodeName, signal), nodeName, this.where);
    const name = old.metadata?.name ?? '';
    const uid = old.metadata?.uid ?? '';
    const { namespace } = this.o;
    try {
      await this.pacer.run(
        `delete pod ${namespace}/${name}`,
        () => this.core.deleteNamespacedPod({ name, namespace, body: { preconditions: { uid } } }),
        signal,
      );
    } catch (err) {
      throw refused(err, 'delete', namespace);
    }
    const deletedMs = Date.now() - began;
    this.o.log.info('dataplane pod deleted', { pod: `${namespace}/${name}`, node: nodeName });
    let oldGoneMs: number | undefined;
    const deadline = began + (this.o.readyTimeoutMs ?? 180_000);
    for (;;) {
      const pods = await this.list(nodeName, signal);
      if (oldGoneMs === undefined && !pods.some((p) => p.metadata?.uid === uid)) oldGoneMs = Date.now() - began;
      const fresh = pods.find((p) => p.metadata?.uid !== uid && !p.metadata?.deletionTimestamp && podReady(p));
      if (fresh)
        return {
          restarted: `${namespace}/${name} on ${nodeName}, now ${fresh.metadata?.name}`,
          deletedMs,
          ...(oldGoneMs !== undefined ? { oldGoneMs } : {}),
          readyMs: Date.now() - began,
        };
      if (Date.now() > deadline)
        throw new CniBenchError(
          ErrorCodes.TIMEOUT,
          `dataplane-restart: ${namespace}/${name} deleted, but no new pod matching ${this.where} ran Ready on node '${nodeName}' within ${Math.round((deadline - began) / 1000)} s`,
        );
      if (signal?.aborted) throw signal.reason;
      await sleep(this.o.pollMs ?? 100, signal);
    }
  }
}

/** The operator allowed it: `frontend` restarts the client node's dataplane pod through `kc` from now on (serve.ts, and the tests). */
export function allowDataplaneRestart(
  frontend: KubernetesServiceFrontend,
  kc: KubeConfig,
  o: DataplaneRestartOptions,
): DataplaneRestarter {
  const restarter = new DataplaneRestarter(kc.makeApiClient(CoreV1Api), frontend.pacer, o);
  frontend.restartDataplane = (node, signal) => restarter.restart(node, signal);
  return restarter;
}
