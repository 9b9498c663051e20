/**
 * The lab's Cilium dataplanes (`cilium`: native routing; `cilium-vxlan`:
 * Cilium's VXLAN tunnel), both with kube-proxy replacement and no kube-proxy:
 * the lab's own control plane (control-plane.ts), Cilium's CRDs and its
 * cilium-config ConfigMap, a Node per lab node, a real cilium-agent per node
 * (agent.ts), and every lab pod a Pod object wired by the real cilium-cni
 * (cni.ts), so it is a real Cilium endpoint. Services are what the collector's
 * Kubernetes frontend creates (Service + EndpointSlice) and Cilium programs;
 * the report's Cluster line is what the collector's describer detects from the
 * apiserver. The operator is not run (scripts/build-cilium.sh says why): the
 * lab applies the CRDs, and IPAM is Node.spec.podCIDRs from
 * kube-controller-manager.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AppsV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { ClusterDescriber, ClusterInventory, KubernetesServiceFrontend } from '../../collector/index.js';
import type { ClusterDescription } from '../../core/cluster.js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { dummyClusterIp } from '../dummy-services.js';
import { LabApiFrontend } from '../k8s/api-frontend.js';
import { LAB_PACER, type LabControlPlane, startPlanControlPlane } from '../k8s/control-plane.js';
import { registerLabNodes } from '../k8s/nodes.js';
import { type CiliumBuild, ciliumBuild } from '../k8s/tools.js';
import { CLUSTER_CIDR, type LabPlan } from '../plan.js';
import { labRunDir } from '../state.js';
import { agentRunDir, type CiliumAgent, startCiliumAgent } from './agent.js';
import { RestartCanary } from './canary.js';
import { createLabCgroups, nodeCgroupDir, podCgroupDir, removeLabCgroups } from './cgroups.js';
import { type CniCall, cniAdd, cniDel } from './cni.js';
import { CILIUM_CONFIGMAP, CILIUM_NAMESPACE, type CiliumDataplane, ciliumConfigData } from './config.js';
import { type NodeMounts, startNodeMounts } from './node-mounts.js';
import { LAB_POD_NAMESPACE, LAB_SWEEP_NAMESPACE, podObject, runningPodStatus } from './objects.js';
import { LabCiliumRollout } from './rollout.js';

const AGENT_READY_TIMEOUT_MS = 300_000;
const NODE_MOUNTS_TIMEOUT_MS = 30_000;
const POD_CIDR_TIMEOUT_MS = 60_000;

/** Pure: the Pod object name of lab pod j on node i (the agent's pod name, as Lab.startAgents names it). */
export function labPodName(node: number, pod: number): string {
  if (pod === 0) return `cni-bench-agent-${node}`;
  if (pod === 1 && node === 0) return `cni-bench-agent-peer-${node}`;
  return `lab-n${node}-p${pod}`;
}

export interface CiliumLabOptions {
  /** bpf-lb-map-max in cilium-config from the start (undefined: Cilium's default). */
  lbMapMax?: number;
  /** cilium-config keys over the lab's own (e.g. a deliberately small bpf-lb-map-max). */
  ciliumConfig?: Readonly<Record<string, string>>;
  /** May the collector's sweep preflight raise bpf-lb-map-max (restarting the lab's agents) and revert it? */
  allowCiliumConfigChange?: boolean;
}

export class CiliumLab extends LabApiFrontend {
  readonly programmedLater = true;
  protected readonly labName = 'cilium lab';
  private cp: LabControlPlane | undefined;
  private kc: KubeConfig | undefined;
  private inventory: ClusterInventory | undefined;
  private readonly agents: CiliumAgent[] = [];
  /** Each node's mount namespace with its bpffs, held for the lab's life (node-mounts.ts). */
  private readonly nodeMounts: NodeMounts[] = [];
  private readonly wired: CniCall[] = [];
  private build: CiliumBuild | undefined;
  private canary: RestartCanary | undefined;
  private rollout: LabCiliumRollout | undefined;

  constructor(
    readonly mode: CiliumDataplane,
    private readonly plan: LabPlan,
    private readonly log: Logger,
    private options: CiliumLabOptions = {},
  ) {
    super();
  }

  get description(): string {
    return 'Kubernetes Services and EndpointSlices (lab apiserver), programmed by Cilium';
  }

  /** What the collector's describer detected from the lab's apiserver (cilium-config, Nodes, /version). */
  get cluster(): Partial<ClusterDescription> {
    return this.frontend?.cluster ?? {};
  }

  /** The lab's control plane (tests read the apiserver through it). */
  get controlPlane(): LabControlPlane | undefined {
    return this.cp;
  }

  get ciliumAgents(): readonly CiliumAgent[] {
    return this.agents;
  }

  /** The operator's opt-in to let a sweep raise bpf-lb-map-max (restarting the agents), changeable between runs. */
  setAllowCiliumConfigChange(allow: boolean): void {
    this.options = { ...this.options, allowCiliumConfigChange: allow };
    this.frontend?.setAllowCiliumConfigChange(allow);
  }

  /** The last sweep's LB-map preflight: what it found, raised and reverted. */
  get lbMapPreflight(): KubernetesServiceFrontend['lbMapPreflight'] {
    return this.frontend?.lbMapPreflight;
  }

  async refreshCluster(maxAgeMs?: number): Promise<void> {
    await this.frontend?.refreshCluster(maxAgeMs);
  }

  private get dir(): string {
    return join(labRunDir(this.plan.id), 'cilium');
  }

  async init(signal?: AbortSignal): Promise<void> {
    const began = Date.now();
    const step = (): void => {
      if (signal?.aborted)
        throw new CniBenchError(ErrorCodes.CANCELLED, 'interrupted while the Cilium lab was starting');
    };
    this.build = ciliumBuild();
    await createLabCgroups(this.plan.id, this.plan.nodes.length);
    for (const n of this.plan.nodes) n.podCgroup = podCgroupDir(this.plan.id, n.index);
    this.cp = await startPlanControlPlane(this.plan);
    step();
    const kc = new KubeConfig();
    kc.loadFromFile(this.cp.adminKubeconfig);
    this.kc = kc;
    const config = {
      ...ciliumConfigData({
        dataplane: this.mode,
        clusterCidr: CLUSTER_CIDR,
        labId: this.plan.id,
        ...(this.options.lbMapMax !== undefined ? { lbMapMax: this.options.lbMapMax } : {}),
      }),
      ...this.options.ciliumConfig,
    };
    await this.applyBase(config);
    await this.registerNodes();
    step();
    this.log.info('cilium lab: control plane up, nodes registered', { ms: Date.now() - began });
    for (const node of this.plan.nodes) {
      const mounts = startNodeMounts(this.nodeDir(node.index), nodeCgroupDir(this.plan.id, node.index), node.ns);
      this.nodeMounts.push(mounts);
      await mounts.ready(NODE_MOUNTS_TIMEOUT_MS);
    }
    for (const node of this.plan.nodes) this.agents.push(await this.startAgent(node.index, config));
    const ready = await Promise.all(this.agents.map((a) => a.ready(AGENT_READY_TIMEOUT_MS, signal)));
    step();
    this.log.info('cilium lab: agents ready', { dataplane: this.mode, readyMs: ready.join(',') });
    await this.wirePods();
    await this.startFrontend();
    // A collector in its own process restarts Cilium as in a cluster: a rollout restart of daemonset/cilium.
    this.rollout = new LabCiliumRollout(
      kc.makeApiClient(AppsV1Api),
      CILIUM_NAMESPACE,
      this.plan.id,
      this.plan.nodes.length,
      () => this.restartAgents(),
      this.log,
    );
    await this.rollout.start();
    this.log.info('cilium lab ready', { dataplane: this.mode, ms: Date.now() - began });
  }

  private nodeDir(index: number): string {
    return join(this.dir, `n${index}`);
  }

  private async startAgent(index: number, config: Record<string, string>): Promise<CiliumAgent> {
    const node = this.plan.nodes[index] as LabPlan['nodes'][number];
    const holder = this.nodeMounts[index];
    if (holder?.exitCode() !== undefined || !holder)
      throw new CniBenchError(
        ErrorCodes.LAB,
        `cilium lab: ${node.name}'s node mounts are gone (${holder?.exitCode()})`,
      );
    return startCiliumAgent({
      build: this.build as CiliumBuild,
      nodeName: node.name,
      holderPid: holder.pid,
      cgroupDir: nodeCgroupDir(this.plan.id, node.index),
      runDir: this.nodeDir(node.index),
      config,
      kubeconfig: (this.cp as LabControlPlane).labKubeconfigText(),
    });
  }

  /**
   * What a DaemonSet rollout does in a cluster: each node's cilium-agent in
   * turn stopped and started again with cilium-config as the apiserver has it
   * now, and ready (cilium-dbg status) before the next. The node's bpffs stays
   * (node-mounts.ts): the new agent reopens the pinned maps (recreating one
   * whose size changed, pkg/bpf/bpf_linux.go) and restores endpoints from the
   * state directory. Ready is not enough: each
   * node's pod must connect through every canary Service again (canary.ts)
   * before the next node goes. Whether a change took is for the caller to
   * verify in the maps.
   */
  async restartAgents(signal?: AbortSignal): Promise<void> {
    const cm = await this.core.readNamespacedConfigMap({ name: CILIUM_CONFIGMAP, namespace: CILIUM_NAMESPACE });
    const config = cm.data ?? {};
    const began = Date.now();
    this.canary ??= await RestartCanary.start(
      this.plan,
      this.core,
      (this.kc as KubeConfig).makeApiClient(DiscoveryV1Api),
    );
    for (const i of this.plan.nodes.keys()) await this.canary.reachableFrom(i, AGENT_READY_TIMEOUT_MS, signal);
    const canaryMs: number[] = [];
    for (const [i, agent] of this.agents.entries()) {
      await agent.stop();
      this.agents[i] = await this.startAgent(i, config);
      const restarted = this.agents[i] as CiliumAgent;
      await restarted.ready(AGENT_READY_TIMEOUT_MS, signal);
      // Ready is not regenerated: each pod's endpoint is back (programs compiled and attached) before the next node.
      const pods = (this.plan.nodes[i]?.pods ?? []).map((p) => p.ip).filter((ip): ip is string => Boolean(ip));
      await restarted.endpointsReady(pods, AGENT_READY_TIMEOUT_MS, signal);
      canaryMs.push(await this.canary.reachableFrom(i, AGENT_READY_TIMEOUT_MS, signal));
    }
    this.log.info('cilium lab: agents restarted with cilium-config', {
      ms: Date.now() - began,
      // After each node's endpoints were ready, how long until its pod connected through every canary Service.
      canaryMs: canaryMs.join(','),
      'bpf-lb-map-max': config['bpf-lb-map-max'] ?? '(unset)',
    });
  }

  /**
   * One node's cilium-agent stopped (SIGTERM) and started again with the same
   * cilium-config, as a pod of the DaemonSet restarting: a disruption phase's
   * dataplane-restart. Resolves once it is ready with its endpoints back. The
   * node's bpffs outlives the agent (node-mounts.ts), so the datapath it pinned
   * keeps serving while no agent runs, as on a node.
   */
  async restartDataplane(nodeName: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const i = this.plan.nodes.findIndex((n) => n.name === nodeName);
    const old = this.agents[i];
    if (!old) throw new CniBenchError(ErrorCodes.NOT_FOUND, `cilium lab: no cilium-agent on node '${nodeName}'`);
    const cm = await this.core.readNamespacedConfigMap({ name: CILIUM_CONFIGMAP, namespace: CILIUM_NAMESPACE });
    const began = Date.now();
    await old.stop();
    const stoppedMs = Date.now() - began;
    const agent = await this.startAgent(i, cm.data ?? {});
    this.agents[i] = agent;
    await agent.ready(AGENT_READY_TIMEOUT_MS, signal);
    const readyMs = Date.now() - began;
    const pods = (this.plan.nodes[i]?.pods ?? []).map((p) => p.ip).filter((ip): ip is string => Boolean(ip));
    await agent.endpointsReady(pods, AGENT_READY_TIMEOUT_MS, signal);
    return {
      restarted: `cilium-agent on ${nodeName} (pid ${old.pid}, now ${agent.pid})`,
      stoppedMs,
      readyMs,
      endpointsReadyMs: Date.now() - began,
    };
  }

  private get core(): CoreV1Api {
    return (this.kc as KubeConfig).makeApiClient(CoreV1Api);
  }

  /** CRDs (the operator's job), namespaces, the pods' ServiceAccount, and cilium-config. */
  private async applyBase(config: Record<string, string>): Promise<void> {
    const api = KubernetesObjectApi.makeApiClient(this.kc as KubeConfig);
    const crdDir = (this.build as CiliumBuild).crds;
    for (const f of readdirSync(crdDir)
      .filter((n) => n.endsWith('.yaml'))
      .sort()) {
      for (const doc of parseAllDocuments(readFileSync(join(crdDir, f), 'utf8'))) {
        const obj = doc.toJS() as KubernetesObject | null;
        if (obj?.kind) await api.create(obj);
      }
    }
    for (const name of [LAB_POD_NAMESPACE, LAB_SWEEP_NAMESPACE])
      await this.core.createNamespace({ body: { metadata: { name } } });
    await this.core
      .createNamespacedServiceAccount({ namespace: LAB_POD_NAMESPACE, body: { metadata: { name: 'default' } } })
      .catch((err: { code?: number }) => {
        if (err.code !== 409) throw err;
      });
    await this.core.createNamespacedConfigMap({
      namespace: CILIUM_NAMESPACE,
      body: { metadata: { name: CILIUM_CONFIGMAP, labels: { 'app.kubernetes.io/part-of': 'cilium' } }, data: config },
    });
  }

  /** Node objects with the status a kubelet would write; then kube-controller-manager's pod CIDRs. */
  private async registerNodes(): Promise<void> {
    await registerLabNodes(this.core, this.plan, POD_CIDR_TIMEOUT_MS);
  }

  /** A Pod object per lab pod, CNI ADD through the real plugin, then the status a kubelet would report. */
  private async wirePods(): Promise<void> {
    for (const [i, node] of this.plan.nodes.entries()) {
      const agent = this.agents[i] as CiliumAgent;
      for (const [j, pod] of node.pods.entries()) {
        const name = labPodName(node.index, j);
        const created = await this.core.createNamespacedPod({
          namespace: LAB_POD_NAMESPACE,
          body: podObject(name, node.name, this.plan.id, j === 0 || (j === 1 && node.index === 0)),
        });
        const call: CniCall = {
          cni: (this.build as CiliumBuild).cni,
          nodeNs: node.ns,
          podNs: pod.ns,
          containerId: `cnib${this.plan.id}n${node.index}p${j}`,
          podName: name,
          podNamespace: LAB_POD_NAMESPACE,
          podUid: created.metadata?.uid ?? '',
          socket: agent.socket,
          logFile: join(agentRunDir(join(this.dir, `n${node.index}`)), 'cilium-cni.log'),
        };
        const res = await cniAdd(call);
        this.wired.push(call);
        pod.ip = res.ip;
        if (res.hostIf) pod.hostIf = res.hostIf;
        await this.core.replaceNamespacedPodStatus({
          name,
          namespace: LAB_POD_NAMESPACE,
          body: { ...created, status: runningPodStatus(res.ip, node.underlayIp) },
        });
      }
    }
  }

  /** The collector's own Kubernetes frontend and describer against the lab apiserver, wired as collector/main.ts wires them. */
  private async startFrontend(): Promise<void> {
    const kc = this.kc as KubeConfig;
    const frontend = new KubernetesServiceFrontend(kc, {
      namespace: LAB_POD_NAMESPACE,
      sweepNamespace: LAB_SWEEP_NAMESPACE,
      ciliumNamespace: CILIUM_NAMESPACE,
      allowCiliumConfigChange: this.options.allowCiliumConfigChange ?? false,
      restartCilium: () => this.restartAgents(),
      log: this.log,
      // The lab's own apiserver: a sweep step's thousands of objects need not be paced for a shared cluster.
      pacer: LAB_PACER,
      // Requested ClusterIPs skip the apiserver's allocator lock (docs/findings/2026-12-06-k8s-writes.md).
      dummyClusterIp,
    });
    await frontend.init();
    this.inventory = new ClusterInventory(
      kc,
      frontend.pacer,
      LAB_POD_NAMESPACE,
      'app.kubernetes.io/name=cni-bench-agent',
      this.log,
    );
    await this.inventory.start();
    const describer = new ClusterDescriber(kc, frontend.pacer, this.inventory, {
      ciliumNamespace: CILIUM_NAMESPACE,
      log: this.log,
    });
    await describer.refresh();
    frontend.describeWith(describer);
    this.frontend = frontend;
  }

  /**
   * CNI DEL for every wired pod (the agent removes the endpoint), then the
   * agents, the control plane and the cgroups. The namespaces (and anything
   * left in them) are the lab's to delete. Never throws; logs.
   */
  async destroy(): Promise<void> {
    await this.inventory?.stop().catch(() => undefined);
    // An agent that died on its own took its node's datapath with it: say so beside the report.
    for (const a of this.agents) {
      const code = a.exitCode();
      if (code !== undefined)
        this.log.error(`cilium-agent on ${a.nodeName} exited (code ${code}) while the lab ran`, { tail: a.tail(5) });
    }
    await this.rollout?.stop();
    this.rollout = undefined;
    await this.canary?.stop();
    this.canary = undefined;
    for (const call of this.wired.splice(0)) {
      await cniDel(call).catch((err: Error) =>
        this.log.warn('cilium-cni DEL failed', { pod: call.podName, error: err.message }),
      );
    }
    await Promise.allSettled(this.agents.splice(0).map((a) => a.stop()));
    // The nodes' bpffs go with their holders: every pin, and with it the programs Cilium attached.
    await Promise.allSettled(this.nodeMounts.splice(0).map((m) => m.stop()));
    await this.cp?.stop().catch((err: Error) => this.log.warn('lab control plane stop failed', { error: err.message }));
    this.cp = undefined;
  }

  /** After the namespaces are gone: the lab's cgroup subtree. */
  async removeCgroups(): Promise<void> {
    await removeLabCgroups(this.plan.id);
  }
}
