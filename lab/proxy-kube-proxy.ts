/**
 * The lab's real-kube-proxy dataplanes (`kube-proxy-iptables`,
 * `kube-proxy-nftables`): the lab's own control plane (k8s/control-plane.ts,
 * as the Cilium lab runs it), a Node per lab node, and the real kube-proxy
 * v1.37 (k8s/kube-proxy.ts) as one process per node namespace, on the node's
 * CPUs, watching that apiserver. Pods are wired as in the emulated lab (a
 * bridge per node, routes between nodes); only the Service rules come from
 * kube-proxy. Services are what the collector's Kubernetes frontend writes
 * (Service + EndpointSlice), and one counts as exposed only once every node's
 * ruleset sends its ClusterIP to exactly its endpoints (k8s/kube-proxy-rules.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { KubernetesServiceFrontend } from '../collector/index.js';
import type { ClusterDescription } from '../core/cluster.js';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { runInNetns } from '../core/netns.js';
import type { ExtraServicePort, ServiceAddress, ServiceEndpoint } from '../core/service-frontend.js';
import { LAB_POD_NAMESPACE, LAB_SWEEP_NAMESPACE } from './cilium/objects.js';
import { waitFor } from './cilium/wait.js';
import { dummyClusterIp } from './dummy-services.js';
import { LabApiFrontend } from './k8s/api-frontend.js';
import { LAB_PACER, type LabControlPlane, startPlanControlPlane } from './k8s/control-plane.js';
import { type KubeProxyMode, type KubeProxyProcess, startKubeProxyProcess } from './k8s/kube-proxy.js';
import { type KubeProxyHealthReader, startKubeProxyHealthReader } from './k8s/kube-proxy-health.js';
import { programmedAs, rulesDumpCommand } from './k8s/kube-proxy-rules.js';
import { registerLabNodes } from './k8s/nodes.js';
import type { LabPlan } from './plan.js';
import { labRunDir } from './state.js';

export const KUBE_PROXY_DATAPLANES = ['kube-proxy-iptables', 'kube-proxy-nftables'] as const;
export type KubeProxyDataplane = (typeof KUBE_PROXY_DATAPLANES)[number];

export function isKubeProxyMode(mode: string): mode is KubeProxyDataplane {
  return (KUBE_PROXY_DATAPLANES as readonly string[]).includes(mode);
}

/** First start: its informers list everything and its first sync runs (seconds; minutes under heavy load). */
const START_TIMEOUT_MS = 120_000;
/** A Service in every node's rules: kube-proxy syncs within about a second (its min-sync-period is 1 s). */
const PROGRAMMED_TIMEOUT_MS = 60_000;

export class KubeProxyLab extends LabApiFrontend {
  protected readonly labName = 'kube-proxy lab';
  /** expose() returns only once every node's rules show the Service. */
  readonly programmedLater = false;
  readonly kubeProxyMode: KubeProxyMode;
  private cp: LabControlPlane | undefined;
  private readonly proxies: KubeProxyProcess[] = [];
  private readonly health: KubeProxyHealthReader[] = [];

  constructor(
    readonly mode: KubeProxyDataplane,
    private readonly plan: LabPlan,
    private readonly log: Logger,
  ) {
    super();
    this.kubeProxyMode = mode === 'kube-proxy-iptables' ? 'iptables' : 'nftables';
  }

  get description(): string {
    return `Kubernetes Services and EndpointSlices (lab apiserver), programmed by the real kube-proxy (${this.kubeProxyMode} mode)`;
  }

  get cluster(): Partial<ClusterDescription> {
    return {
      ...this.frontend?.cluster,
      cni: 'lab bridge',
      cniMode: 'routed',
      kubeProxyMode: `${this.kubeProxyMode} (real kube-proxy)`,
    };
  }

  /** The lab's control plane (tests read the apiserver through it). */
  get controlPlane(): LabControlPlane | undefined {
    return this.cp;
  }

  /** Each node's kube-proxy, in node order. */
  get kubeProxies(): readonly KubeProxyProcess[] {
    return this.proxies;
  }

  private get dir(): string {
    return join(labRunDir(this.plan.id), 'kube-proxy');
  }

  async init(signal?: AbortSignal): Promise<void> {
    const began = Date.now();
    const step = (): void => {
      if (signal?.aborted)
        throw new CniBenchError(ErrorCodes.CANCELLED, 'interrupted while the kube-proxy lab was starting');
    };
    this.cp = await startPlanControlPlane(this.plan);
    step();
    const kc = new KubeConfig();
    kc.loadFromFile(this.cp.adminKubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    for (const name of [LAB_POD_NAMESPACE, LAB_SWEEP_NAMESPACE])
      await core.createNamespace({ body: { metadata: { name } } });
    await registerLabNodes(core, this.plan);
    step();
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const kubeconfig = join(this.dir, 'kube-proxy.kubeconfig');
    writeFileSync(kubeconfig, this.cp.labKubeconfigText(), { mode: 0o600 });
    for (const node of this.plan.nodes) {
      this.proxies.push(
        startKubeProxyProcess({
          dir: this.dir,
          name: `kube-proxy-${node.name}`,
          netns: node.ns,
          mode: this.kubeProxyMode,
          nodeName: node.name,
          kubeconfig,
          ...(node.cpus ? { cpus: node.cpus } : {}),
        }),
      );
      this.health.push(await startKubeProxyHealthReader(this.dir, `kube-proxy-${node.name}`, node.ns));
    }
    // Ready in the dataplane: each has synced, and its rules' root (KUBE-SERVICES, table ip kube-proxy) is in its node.
    await Promise.all(
      this.plan.nodes.map(async (node, i) => {
        const proxy = this.proxies[i] as KubeProxyProcess;
        await (this.health[i] as KubeProxyHealthReader).syncedSince(
          began,
          START_TIMEOUT_MS,
          () => proxy.exitCode() === undefined,
          signal,
        );
        await waitFor(`kube-proxy's rules in ${node.name}`, () => this.rootPresent(node.ns), START_TIMEOUT_MS, 100);
      }),
    );
    step();
    const frontend = new KubernetesServiceFrontend(kc, {
      namespace: LAB_POD_NAMESPACE,
      sweepNamespace: LAB_SWEEP_NAMESPACE,
      log: this.log,
      pacer: LAB_PACER,
      dummyClusterIp,
    });
    await frontend.init();
    this.frontend = frontend;
    this.log.info('kube-proxy lab ready', { dataplane: this.mode, ms: Date.now() - began });
  }

  private async dump(ns: string): Promise<string> {
    const [file, args] = rulesDumpCommand(this.kubeProxyMode);
    return (await runInNetns({ name: ns }, 'rules-dump', file, args)).stdout;
  }

  private async rootPresent(ns: string): Promise<boolean> {
    const text = await this.dump(ns);
    return this.kubeProxyMode === 'iptables' ? /^:KUBE-SERVICES /m.test(text) : /table ip kube-proxy/.test(text);
  }

  /** Polls every node's ruleset until each port of the Service goes to exactly its endpoints. */
  private async untilProgrammed(
    ports: readonly { ip: string; port: number; endpoints: readonly ServiceEndpoint[] }[],
  ): Promise<void> {
    await Promise.all(
      this.plan.nodes.map((node) =>
        waitFor(
          `kube-proxy in ${node.name} to program ${ports.map((p) => `${p.ip}:${p.port}`).join(', ')}`,
          async () => {
            const text = await this.dump(node.ns);
            return ports.every((p) => programmedAs(this.kubeProxyMode, text, p.ip, p.port, p.endpoints));
          },
          PROGRAMMED_TIMEOUT_MS,
          100,
        ),
      ),
    );
  }

  override async expose(
    name: string,
    port: number,
    endpoints: ServiceEndpoint[],
    extraPorts: readonly ExtraServicePort[] = [],
  ): Promise<ServiceAddress> {
    const addr = await super.expose(name, port, endpoints, extraPorts);
    await this.untilProgrammed([
      { ip: addr.ip, port, endpoints },
      ...extraPorts.map((x) => ({
        ip: addr.ip,
        port: x.port,
        endpoints: endpoints.map((e) => ({ ip: e.ip, port: x.targetPort })),
      })),
    ]);
    return addr;
  }

  /**
   * One node's kube-proxy stopped (SIGTERM) and started again with the same
   * flags, its rules left in place, as a DaemonSet pod restarting: a
   * disruption phase's dataplane-restart. Resolves once /healthz answers 200
   * and the new process has finished a sync (what a readiness probe on its
   * health check would wait for).
   */
  async restartDataplane(nodeName: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const i = this.plan.nodes.findIndex((n) => n.name === nodeName);
    const proxy = this.proxies[i];
    const health = this.health[i];
    if (!proxy || !health)
      throw new CniBenchError(ErrorCodes.NOT_FOUND, `kube-proxy lab: no kube-proxy on node '${nodeName}'`);
    const oldPid = proxy.pid();
    const began = Date.now();
    await proxy.restart();
    const restartedMs = Date.now() - began;
    const synced = await health.syncedSince(began, START_TIMEOUT_MS, () => proxy.exitCode() === undefined, signal);
    return {
      restarted: `kube-proxy (${this.kubeProxyMode}) on ${nodeName} (pid ${oldPid}, now ${proxy.pid()})`,
      // The old process gone and the new one started.
      stoppedMs: restartedMs,
      // Healthy with its first sync done, as reported by kube-proxy; seen by the lab at most ~50 ms later.
      readyMs: Math.max(0, synced - began),
      seenReadyMs: Date.now() - began,
    };
  }

  /**
   * The kube-proxies (their rules go with the node namespaces the lab deletes
   * next), the health forwarders and the control plane. Never throws; logs.
   */
  async destroy(): Promise<void> {
    for (const p of this.proxies) {
      const code = p.exitCode();
      if (code !== undefined)
        this.log.error(`kube-proxy in ${p.netns} exited (code ${code}) while the lab ran`, { tail: p.tail(5) });
    }
    await Promise.allSettled(this.health.splice(0).map((h) => h.stop()));
    await Promise.allSettled(this.proxies.splice(0).map((p) => p.stop()));
    await this.cp?.stop().catch((err: Error) => this.log.warn('lab control plane stop failed', { error: err.message }));
    this.cp = undefined;
  }
}
