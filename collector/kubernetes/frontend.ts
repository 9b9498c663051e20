/**
 * The collector's service frontend in a cluster: the run's "via ClusterIP
 * Service" path is a selector-less Service plus an EndpointSlice pointing at the
 * server agent, in the collector's namespace; a scale sweep's dummy Services
 * and their EndpointSlices go into the dedicated sweep namespace. Every object
 * is labelled with the run's ID; every call goes through the Pacer (bounded
 * parallelism, QPS and burst, backoff on 429/5xx). What a crashed collector
 * left is removed at start-up (one collector per cluster: its Deployment uses
 * the Recreate strategy).
 */
import { CoreV1Api, DiscoveryV1Api, type KubeConfig, VersionApi } from '@kubernetes/client-node';
import type { ClusterDescription } from '../../core/cluster.js';
import type { ConditionDriver } from '../../core/conditions.js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type {
  ExtraServicePort,
  ScalePrepareContext,
  ScaleStep,
  ServiceAddress,
  ServiceEndpoint,
  ServiceFrontend,
  ServiceScaler,
} from '../../core/service-frontend.js';
import type { LbMapPreflightRecord } from '../runs/cilium-preflight.js';
import { CiliumConfig } from './cilium-config.js';
import type { ClusterDescriber } from './cluster-describer.js';
import { reuseConnections } from './connections.js';
import { DATAPLANE_RESTART_REFUSAL } from './dataplane-restart.js';
import { ALL_MANAGED, dummyPair, ROLE_LABEL, runSelector, type ServicePair, servicePair } from './objects.js';
import { apiMessage, DEFAULT_PACER, Pacer, type PacerOptions, statusOf } from './pacer.js';

export interface KubernetesFrontendOptions {
  /** The collector's own namespace (the run's fronting Services). */
  namespace: string;
  /** Where a sweep's dummy Services go (created by the chart with its Role). */
  sweepNamespace: string;
  pacer?: PacerOptions;
  /** May the collector raise Cilium's bpf-lb-map-max (and revert it)? */
  allowCiliumConfigChange?: boolean;
  ciliumNamespace?: string;
  /** How Cilium restarts after its configuration changed (the lab restarts its agents); default: a rollout restart of daemonset/cilium. */
  restartCilium?: () => Promise<void>;
  /**
   * A ClusterIP for dummy Service i, for an owner that knows a part of the
   * Service range nothing else allocates from (the lab). kube-apiserver 1.37
   * allocates a dynamic ClusterIP under one lock per range and, inside it,
   * lists every IPAddress twice for its metrics, so dynamic creates run one at
   * a time and slow as Services accumulate; a requested address skips the
   * lock and the free-address search (the two lists remain, in parallel:
   * docs/findings/2026-12-06-k8s-writes.md). An address already taken falls
   * back to a dynamic one. Default: dynamic.
   */
  dummyClusterIp?: (index: number) => string;
  log: Logger;
}

export class KubernetesServiceFrontend implements ServiceFrontend, ServiceScaler {
  readonly description = 'Kubernetes Services and EndpointSlices';
  readonly scale = this;
  /** The cluster's service proxy programs what the apiserver accepted on its own schedule. */
  readonly programmedLater = true;
  readonly pacer: Pacer;
  /** Overhead conditions in the cluster (conditions.ts), attached by serve.ts. */
  conditions?: ConditionDriver;
  /**
   * The client node's dataplane pod deleted and waited for (dataplane-restart.ts),
   * attached by serve.ts only with the operator's opt-in; without it the event
   * is refused before the run with `dataplaneRestartRefusal`.
   */
  restartDataplane?: (nodeName: string, signal?: AbortSignal) => Promise<Record<string, unknown>>;
  readonly dataplaneRestartRefusal = DATAPLANE_RESTART_REFUSAL;
  private version: Partial<ClusterDescription> = {};
  private describer: ClusterDescriber | undefined;
  private readonly core: CoreV1Api;
  private readonly discovery: DiscoveryV1Api;
  private readonly cilium: CiliumConfig;
  private allowCiliumChange: boolean;
  private dummies = 0;
  private dummyEndpoints = 0;
  private runId = 'none';
  /** Fronting Services by name, for remove(). */
  private readonly own = new Set<string>();
  /** Their ports, for setEndpoints() to write a whole EndpointSlice again. */
  private readonly ports = new Map<string, { port: number; extraPorts: readonly ExtraServicePort[] }>();

  constructor(
    private readonly kc: KubeConfig,
    private readonly opts: KubernetesFrontendOptions,
  ) {
    this.pacer = new Pacer(opts.pacer ?? DEFAULT_PACER);
    this.allowCiliumChange = opts.allowCiliumConfigChange ?? false;
    // One keep-alive pool for every client made from kc (connections.ts says why), not a TLS handshake per call.
    reuseConnections(kc);
    this.core = kc.makeApiClient(CoreV1Api);
    this.discovery = kc.makeApiClient(DiscoveryV1Api);
    this.cilium = new CiliumConfig(
      kc,
      this.core,
      this.pacer,
      opts.ciliumNamespace ?? 'kube-system',
      opts.log,
      opts.restartCilium,
    );
  }

  /** Reads the cluster's version and removes what an earlier collector left behind. */
  async init(): Promise<{ leftovers: number }> {
    const v = await this.pacer.run('GET /version', () => this.kc.makeApiClient(VersionApi).getCode());
    this.version = { kubernetesVersion: v.gitVersion };
    const leftovers =
      (await this.removeBySelector(this.opts.namespace, ALL_MANAGED)) +
      (await this.removeBySelector(this.opts.sweepNamespace, ALL_MANAGED));
    if (leftovers) this.opts.log.warn('removed objects an earlier collector left behind', { objects: leftovers });
    return { leftovers };
  }

  /** What the API says of the cluster: the describer's last detection once one is attached, else the version init() read. */
  get cluster(): Partial<ClusterDescription> {
    return this.describer?.current().description ?? this.version;
  }

  /** Runs' descriptions come from `describer` from now on (main attaches it once the inventory runs). */
  describeWith(describer: ClusterDescriber): void {
    this.describer = describer;
  }

  async refreshCluster(maxAgeMs = 0): Promise<void> {
    await this.describer?.refresh(maxAgeMs);
  }

  async expose(
    name: string,
    port: number,
    endpoints: ServiceEndpoint[],
    extraPorts: readonly ExtraServicePort[] = [],
  ): Promise<ServiceAddress> {
    const pair = servicePair(
      this.opts.namespace,
      `cni-bench-${name}`,
      port,
      endpoints,
      this.runId,
      'frontend',
      extraPorts,
    );
    const svc = await this.create(pair);
    this.own.add(pair.service.metadata?.name ?? '');
    this.ports.set(name, { port, extraPorts });
    const ip = svc.spec?.clusterIP;
    if (!ip || ip === 'None')
      throw new CniBenchError(
        ErrorCodes.KUBERNETES,
        `service ${this.opts.namespace}/${pair.service.metadata?.name}: no ClusterIP allocated`,
      );
    return { ip, port };
  }

  /**
   * The run Service's EndpointSlice written again with `endpoints` (one PUT, as
   * the EndpointSlice controller updates a slice when a pod goes): a
   * disruption phase's endpoint-removed.
   */
  async setEndpoints(name: string, endpoints: ServiceEndpoint[]): Promise<void> {
    const known = this.ports.get(name);
    if (!known) throw new CniBenchError(ErrorCodes.NOT_FOUND, `service cni-bench-${name} is not one of this run's`);
    const namespace = this.opts.namespace;
    const pair = servicePair(
      namespace,
      `cni-bench-${name}`,
      known.port,
      endpoints,
      this.runId,
      'frontend',
      known.extraPorts,
    );
    const full = `cni-bench-${name}`;
    await this.pacer.run(`update endpointslice ${namespace}/${full}`, () =>
      this.discovery.replaceNamespacedEndpointSlice({ name: full, namespace, body: pair.slice }),
    );
  }

  async remove(name: string): Promise<void> {
    const full = `cni-bench-${name}`;
    this.ports.delete(name);
    this.own.delete(full);
    await this.deletePair(this.opts.namespace, full);
  }

  /** The operator's opt-in to raise bpf-lb-map-max, changeable between runs. */
  setAllowCiliumConfigChange(allow: boolean): void {
    this.allowCiliumChange = allow;
  }

  /** What the last sweep preflight decided and changed (the lab and its tests read it). */
  get lbMapPreflight(): LbMapPreflightRecord | undefined {
    return this.cilium.last;
  }

  async prepare(
    maxServices: number,
    endpointsPerService: number,
    runId: string,
    context?: ScalePrepareContext,
  ): Promise<void> {
    this.runId = runId;
    await this.cilium.ensureFits(
      maxServices,
      endpointsPerService,
      this.allowCiliumChange,
      context ? () => context.samples() : undefined,
      context?.signal,
    );
  }

  async finish(): Promise<void> {
    await this.cilium.revert();
  }

  /** Creates or deletes dummies so exactly `count` exist; `added` is what the dataplane must gain over its baseline. */
  async setDummyServices(count: number, endpointsPerService: number, runId?: string): Promise<ScaleStep> {
    if (runId) this.runId = runId;
    const began = Date.now();
    if (this.dummies > 0 && endpointsPerService !== this.dummyEndpoints) await this.resize(0, this.dummyEndpoints);
    this.dummyEndpoints = endpointsPerService;
    await this.resize(count, endpointsPerService);
    return { services: count, programmingMs: Date.now() - began, expect: {}, added: count };
  }

  private async resize(count: number, endpoints: number): Promise<void> {
    const ns = this.opts.sweepNamespace;
    const from = this.dummies;
    if (count === 0 && from > 0) {
      // All of them: two delete-collection calls by the run's label, not 2 x `from` deletes.
      await this.removeBySelector(ns, `${runSelector(this.runId)},${ROLE_LABEL}=scale-dummy`);
      this.dummies = await this.countDummies();
      if (this.dummies)
        throw new CniBenchError(
          ErrorCodes.KUBERNETES,
          `${this.dummies} dummy Services left in ${ns} after deleting the run's ${from} by label`,
        );
      return;
    }
    const indexes = count > from ? range(from, count) : range(count, from).reverse();
    const results = await Promise.allSettled(
      indexes.map((i) =>
        count > from
          ? this.createDummy(ns, i, endpoints)
          : this.deletePair(ns, dummyPair(ns, i, endpoints, this.runId).service.metadata?.name ?? ''),
      ),
    );
    // What really exists now: a failed create leaves a gap, so count the objects rather than trust the arithmetic.
    const failed = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    this.dummies = failed.length ? await this.countDummies() : count;
    if (failed.length)
      throw new CniBenchError(
        ErrorCodes.KUBERNETES,
        `${failed.length} of ${indexes.length} dummy Service changes failed; first: ${(failed[0]?.reason as Error | undefined)?.message}`,
        { cause: failed[0]?.reason },
      );
  }

  /** Dummy i, at its requested ClusterIP when the owner gives one, else (or when that address is taken) a dynamic one. */
  private async createDummy(ns: string, i: number, endpoints: number): Promise<void> {
    const ip = this.opts.dummyClusterIp?.(i);
    try {
      await this.create(dummyPair(ns, i, endpoints, this.runId, ip));
    } catch (err) {
      if (!ip || !isAddressTaken(err)) throw err;
      this.opts.log.debug('dummy ClusterIP taken, allocating one', { service: i, clusterIp: ip });
      await this.create(dummyPair(ns, i, endpoints, this.runId));
    }
  }

  private async countDummies(): Promise<number> {
    const list = await this.pacer.run('list dummy services', () =>
      this.core.listNamespacedService({ namespace: this.opts.sweepNamespace, labelSelector: ALL_MANAGED }),
    );
    return list.items.length;
  }

  private async create(
    pair: ServicePair,
  ): Promise<NonNullable<Awaited<ReturnType<CoreV1Api['createNamespacedService']>>>> {
    const namespace = pair.service.metadata?.namespace ?? '';
    const name = pair.service.metadata?.name ?? '';
    const svc = await this.pacer.run(`create service ${namespace}/${name}`, () =>
      this.core.createNamespacedService({ namespace, body: pair.service }),
    );
    await this.pacer.run(`create endpointslice ${namespace}/${name}`, () =>
      this.discovery.createNamespacedEndpointSlice({ namespace, body: pair.slice }),
    );
    return svc;
  }

  private async deletePair(namespace: string, name: string): Promise<void> {
    await this.pacer.run(`delete service ${namespace}/${name}`, () =>
      ignoreNotFound(this.core.deleteNamespacedService({ name, namespace })),
    );
    await this.pacer.run(`delete endpointslice ${namespace}/${name}`, () =>
      ignoreNotFound(this.discovery.deleteNamespacedEndpointSlice({ name, namespace })),
    );
  }

  /**
   * Deletes every Service and EndpointSlice matching `selector` in `namespace`
   * with one delete-collection call each (the apiserver deletes them, releasing
   * each Service's ClusterIP); returns how many objects went.
   */
  async removeBySelector(namespace: string, selector: string): Promise<number> {
    const services = await this.pacer.run(`list services ${namespace}`, () =>
      this.core.listNamespacedService({ namespace, labelSelector: selector }),
    );
    const slices = await this.pacer.run(`list endpointslices ${namespace}`, () =>
      this.discovery.listNamespacedEndpointSlice({ namespace, labelSelector: selector }),
    );
    // A retry after a timed-out call deletes what is left: delete-collection lists again on the server.
    if (services.items.length)
      await this.pacer.run(`delete services ${namespace} (${selector})`, () =>
        this.core.deleteCollectionNamespacedService({ namespace, labelSelector: selector }),
      );
    if (slices.items.length)
      await this.pacer.run(`delete endpointslices ${namespace} (${selector})`, () =>
        this.discovery.deleteCollectionNamespacedEndpointSlice({ namespace, labelSelector: selector }),
      );
    return services.items.length + slices.items.length;
  }

  /** Removes everything of one run (the orchestrator's cleanup does the same through remove/setDummyServices). */
  async removeRun(runId: string): Promise<number> {
    const sel = runSelector(runId);
    const n =
      (await this.removeBySelector(this.opts.namespace, sel)) +
      (await this.removeBySelector(this.opts.sweepNamespace, sel));
    this.dummies = 0;
    this.own.clear();
    return n;
  }
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, k) => from + k);
}

/** Pure: a create refused because the requested ClusterIP is allocated already (HTTP 422, the apiserver's wording). */
export function isAddressTaken(err: unknown): boolean {
  const cause = (err as { cause?: unknown })?.cause ?? err;
  return statusOf(cause).status === 422 && /already allocated/i.test(apiMessage(cause));
}

async function ignoreNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (statusOf(err).status === 404) return undefined;
    throw err;
  }
}
