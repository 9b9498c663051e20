/**
 * What the collector knows of the cluster from the API: its nodes (schedulable
 * and Ready or not, kernel, instance type) and the agent pods, each kept
 * current by a watch (an informer), so a report can say which nodes have no
 * running agent and describe the node type without the operator labelling
 * anything, and monitoring stops probing a node the moment it is cordoned or
 * goes NotReady (and resumes when it is back).
 */
import {
  CoreV1Api,
  type Informer,
  type KubeConfig,
  makeInformer,
  type ObjectCache,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import type { ClusterDescription } from '../../core/cluster.js';
import type { Logger } from '../../core/log.js';
import { listValues } from './node-values.js';
import type { Pacer } from './pacer.js';

export interface NodeSummary {
  name: string;
  ready: boolean;
  schedulable: boolean;
  /**
   * A worker a run may place load on: no control-plane role and no NoSchedule
   * or NoExecute taint (the agents tolerate every taint, so monitoring still
   * covers such nodes; load goes there only when a scenario names the node).
   */
  worker: boolean;
  kernel: string;
  instanceType: string;
}

export interface Coverage {
  nodes: number;
  /** Ready, schedulable nodes without a Running agent pod. */
  missing: string[];
  agentsRunning: number;
}

/** Pure: the parts of a Node the collector uses. */
export function summarizeNode(n: V1Node): NodeSummary {
  const labels = n.metadata?.labels ?? {};
  return {
    name: n.metadata?.name ?? '',
    ready: n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    schedulable: !n.spec?.unschedulable,
    worker:
      !('node-role.kubernetes.io/control-plane' in labels || 'node-role.kubernetes.io/master' in labels) &&
      !(n.spec?.taints ?? []).some((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute'),
    kernel: n.status?.nodeInfo?.kernelVersion ?? '',
    instanceType: labels['node.kubernetes.io/instance-type'] ?? labels['beta.kubernetes.io/instance-type'] ?? '',
  };
}

/**
 * Pure: a key that changes exactly when a node comes, goes, is cordoned or
 * uncordoned, or turns Ready or not, so status heartbeats (every node update)
 * do not make the monitor plan again.
 */
export function nodeStatusKey(nodes: readonly NodeSummary[]): string {
  return nodes
    .map((n) => `${n.name}:${n.ready ? 'R' : '-'}${n.schedulable ? 'S' : '-'}`)
    .sort()
    .join(',');
}

/** Pure: which Ready, schedulable nodes lack a Running agent. */
export function coverageOf(nodes: NodeSummary[], pods: V1Pod[]): Coverage {
  const running = new Set(
    pods
      .filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp)
      .map((p) => p.spec?.nodeName ?? ''),
  );
  const eligible = nodes.filter((n) => n.ready && n.schedulable);
  return {
    nodes: nodes.length,
    missing: eligible
      .filter((n) => !running.has(n.name))
      .map((n) => n.name)
      .sort(),
    agentsRunning: running.size,
  };
}

export class ClusterInventory {
  private informer: (Informer<V1Pod> & ObjectCache<V1Pod>) | undefined;
  private nodeInformer: (Informer<V1Node> & ObjectCache<V1Node>) | undefined;
  private nodes: NodeSummary[] = [];
  private statusKey = '';
  private readonly statusListeners: (() => void)[] = [];
  private stopped = false;
  private readonly restarts = new Set<NodeJS.Timeout>();

  constructor(
    private readonly kc: KubeConfig,
    private readonly pacer: Pacer,
    private readonly namespace: string,
    private readonly agentSelector: string,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    await this.refreshNodes();
    const core = this.kc.makeApiClient(CoreV1Api);
    this.nodeInformer = makeInformer(this.kc, '/api/v1/nodes', () =>
      this.pacer.run('list nodes', () => core.listNode()),
    );
    for (const ev of ['add', 'update', 'delete'] as const) this.nodeInformer.on(ev, () => this.nodesChanged());
    this.keepWatching(this.nodeInformer, 'node');
    this.informer = makeInformer(
      this.kc,
      `/api/v1/namespaces/${this.namespace}/pods`,
      () => core.listNamespacedPod({ namespace: this.namespace, labelSelector: this.agentSelector }),
      this.agentSelector,
    );
    this.keepWatching(this.informer, 'agent pod');
    await Promise.all([this.nodeInformer.start(), this.informer.start()]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.restarts) clearTimeout(t);
    await Promise.all([this.informer?.stop(), this.nodeInformer?.stop()]);
  }

  /** A watch that fails (apiserver restart, expired resource version) lists and watches again. */
  private keepWatching<T extends V1Node | V1Pod>(informer: Informer<T>, what: string): void {
    informer.on('error', (err: unknown) => {
      if (this.stopped) return;
      this.log.warn(`${what} watch failed; restarting`, { error: (err as Error)?.message });
      const t = setTimeout(() => {
        this.restarts.delete(t);
        if (!this.stopped) void informer.start().catch(() => undefined);
      }, 2000);
      t.unref();
      this.restarts.add(t);
    });
  }

  async refreshNodes(): Promise<NodeSummary[]> {
    const core = this.kc.makeApiClient(CoreV1Api);
    const list = await this.pacer.run('list nodes', () => core.listNode());
    this.setNodes(list.items.map(summarizeNode));
    return this.nodes;
  }

  /**
   * The nodes whole (the cluster description reads their annotations and
   * nodeInfo): the node watch's cache once it runs, kept current by the watch,
   * so a description costs no list request; before that, one list.
   */
  async nodeObjects(): Promise<readonly V1Node[]> {
    if (this.nodeInformer) return this.nodeInformer.list();
    const core = this.kc.makeApiClient(CoreV1Api);
    return (await this.pacer.run('list nodes', () => core.listNode())).items;
  }

  private nodesChanged(): void {
    this.setNodes((this.nodeInformer?.list() ?? []).map(summarizeNode));
  }

  private setNodes(nodes: NodeSummary[]): void {
    this.nodes = nodes;
    const key = nodeStatusKey(nodes);
    if (key === this.statusKey) return;
    this.statusKey = key;
    for (const fn of this.statusListeners) fn();
  }

  /** Every node's readiness and cordon, by name, as the watch last saw them. */
  nodeStatus(): ReadonlyMap<string, NodeSummary> {
    return new Map(this.nodes.map((n) => [n.name, n]));
  }

  /** `fn` runs whenever a node comes, goes, is (un)cordoned or changes readiness. */
  onNodeStatusChange(fn: () => void): void {
    this.statusListeners.push(fn);
  }

  agentPods(): V1Pod[] {
    return [...(this.informer?.list() ?? [])];
  }

  coverage(): Coverage {
    return coverageOf(this.nodes, this.agentPods());
  }

  /** Node type when every node says the same (else each type with its node count). */
  describe(): Partial<ClusterDescription> {
    const nodeType = listValues(this.nodes.map((n) => n.instanceType));
    return nodeType ? { nodeType } : {};
  }
}
