/**
 * The Cilium LB-map preflight of a scale sweep against the live cluster
 * (runs/cilium-preflight.ts decides): reads cilium-config, takes each node's
 * loaded map sizes and entries from the agents' samples, and refuses a sweep
 * whose largest step would overflow the map with the exact command to run; or,
 * only when the operator allowed it, patches `bpf-lb-map-max`, restarts Cilium
 * (a rollout restart of the cilium DaemonSet, as `kubectl rollout restart`
 * does it, or the restart the caller gives: the lab restarts its agents), waits
 * until every node's loaded map reads the new size, and at the end puts the
 * old value back the same way, verified again. No cilium-config ConfigMap
 * means no Cilium: nothing to check.
 */
import { AppsV1Api, type CoreV1Api, type KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { DataplaneSample } from '../../gen/cnibench/v1/agent.js';
import {
  ensureLbMapFits,
  LB_MAP_MAX_KEY,
  type LbMapChange,
  type LbMapPreflightRecord,
  type LbMapPreflightResult,
} from '../runs/cilium-preflight.js';
import { ENABLE_HUBBLE, HUBBLE_BEFORE_ANNOTATION } from './conditions-hubble.js';
import { type Pacer, statusOf } from './pacer.js';

const NAME = 'cilium-config';
const DAEMONSET = 'cilium';
const ROLLOUT_TIMEOUT_MS = 600_000;

/** One fresh dataplane sample per node, keyed by agent: what the orchestrator gives a sweep's preflight. */
export type NodeSamples = () => Promise<ReadonlyMap<string, DataplaneSample | undefined>>;

export class CiliumConfig {
  private change: LbMapChange | undefined;
  /** The last preflight's result (its change, once reverted, says so in `reverted`). */
  last: LbMapPreflightRecord | undefined;

  constructor(
    private readonly kc: KubeConfig,
    private readonly core: CoreV1Api,
    private readonly pacer: Pacer,
    private readonly namespace: string,
    private readonly log: Logger,
    /** Restarts Cilium after a config change; default: a rollout restart of daemonset/cilium, awaited. */
    private readonly restartCilium?: () => Promise<void>,
  ) {}

  /** Undefined when the cluster has no cilium-config. */
  async read(): Promise<Record<string, string> | undefined> {
    return (await this.readMap())?.data;
  }

  /** The Hubble condition's mark (conditions-hubble.ts): enable-hubble's value before, while the collector holds it on. */
  async readAnnotation(): Promise<string | undefined> {
    return (await this.readMap())?.annotations[HUBBLE_BEFORE_ANNOTATION];
  }

  /** Sets enable-hubble (null: removes it) and the mark (null: removes it) in one merge patch. */
  async setHubble(value: string | null, before: string | null): Promise<void> {
    await this.pacer.run(`patch configmap ${this.namespace}/${NAME}`, () =>
      this.core.patchNamespacedConfigMap(
        {
          name: NAME,
          namespace: this.namespace,
          body: { metadata: { annotations: { [HUBBLE_BEFORE_ANNOTATION]: before } }, data: { [ENABLE_HUBBLE]: value } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
  }

  /** Restarts Cilium as a config change needs: the caller's restart, else a rollout restart of daemonset/cilium, awaited. */
  restart(): Promise<void> {
    return this.restartCilium ? this.restartCilium() : this.rolloutRestart();
  }

  private async readMap(): Promise<{ data: Record<string, string>; annotations: Record<string, string> } | undefined> {
    try {
      const cm = await this.core.readNamespacedConfigMap({ name: NAME, namespace: this.namespace });
      return { data: cm.data ?? {}, annotations: cm.metadata?.annotations ?? {} };
    } catch (err) {
      if (statusOf(err).status === 404) return undefined;
      throw new CniBenchError(
        ErrorCodes.KUBERNETES,
        `read configmap ${this.namespace}/${NAME}: ${statusOf(err).status ?? (err as Error).message}`,
        { cause: err },
      );
    }
  }

  async ensureFits(
    services: number,
    endpointsPerService: number,
    allowChange: boolean,
    samples?: NodeSamples,
    signal?: AbortSignal,
  ): Promise<LbMapPreflightResult | undefined> {
    const result = await ensureLbMapFits(services, endpointsPerService, {
      readConfig: () => this.read(),
      writeConfig: (v) => this.patch(v),
      restart: () => this.restart(),
      sampleNodes: samples ?? (async () => new Map()),
      allowChange,
      log: this.log,
      where: { namespace: this.namespace },
      ...(signal ? { signal } : {}),
    });
    this.change = result?.change;
    this.last = result;
    return result;
  }

  /** Puts back what ensureFits changed, restarts Cilium and verifies it on every node. Never throws (logs). */
  async revert(): Promise<void> {
    const change = this.change;
    if (!change) return;
    this.change = undefined;
    try {
      const reverted = await change.revert();
      if (this.last?.change === change) this.last = { ...this.last, reverted };
    } catch (err) {
      this.log.error('cannot restore cilium bpf-lb-map-max', {
        value: change.from || '(unset)',
        error: (err as Error).message,
      });
    }
  }

  private async patch(value: string | null): Promise<void> {
    await this.pacer.run(`patch configmap ${this.namespace}/${NAME}`, () =>
      this.core.patchNamespacedConfigMap(
        { name: NAME, namespace: this.namespace, body: { data: { [LB_MAP_MAX_KEY]: value } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
  }

  /** `kubectl rollout restart daemonset/cilium` and `rollout status`: a new template annotation, then every pod updated and available. */
  private async rolloutRestart(): Promise<void> {
    const apps = this.kc.makeApiClient(AppsV1Api);
    const at = new Date().toISOString();
    const patched = await this.pacer.run(`rollout restart daemonset ${this.namespace}/${DAEMONSET}`, () =>
      apps.patchNamespacedDaemonSet(
        {
          name: DAEMONSET,
          namespace: this.namespace,
          body: { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': at } } } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    const generation = patched.metadata?.generation ?? 0;
    const began = Date.now();
    for (;;) {
      const ds = await this.pacer.run(`get daemonset ${this.namespace}/${DAEMONSET}`, () =>
        apps.readNamespacedDaemonSet({ name: DAEMONSET, namespace: this.namespace }),
      );
      const s = ds.status;
      const desired = s?.desiredNumberScheduled ?? 0;
      if (
        (s?.observedGeneration ?? 0) >= generation &&
        (s?.updatedNumberScheduled ?? 0) >= desired &&
        (s?.numberAvailable ?? 0) >= desired
      )
        return;
      if (Date.now() - began > ROLLOUT_TIMEOUT_MS)
        throw new CniBenchError(
          ErrorCodes.TIMEOUT,
          `daemonset ${this.namespace}/${DAEMONSET} rollout not done after ${ROLLOUT_TIMEOUT_MS / 1000} s (${s?.updatedNumberScheduled ?? 0} of ${desired} updated, ${s?.numberAvailable ?? 0} available)`,
        );
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}
