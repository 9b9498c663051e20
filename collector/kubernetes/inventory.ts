/**
 * What the collector knows of the cluster from the API: its nodes (schedulable
 * and Ready or not, kernel, instance type) and the agent pods, kept current by
 * a watch (an informer), so a report can say which nodes have no running agent
 * and describe the node type without the operator labelling anything.
 */
import { CoreV1Api, makeInformer, type Informer, type KubeConfig, type ObjectCache, type V1Node, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../core/log.js';
import type { ClusterDescription } from '../report/metrics-model.js';
import { listValues } from './node-values.js';
import type { Pacer } from './pacer.js';

export interface NodeSummary {
  name: string;
  ready: boolean;
  schedulable: boolean;
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
    kernel: n.status?.nodeInfo?.kernelVersion ?? '',
    instanceType: labels['node.kubernetes.io/instance-type'] ?? labels['beta.kubernetes.io/instance-type'] ?? '',
  };
}

/** Pure: which Ready, schedulable nodes lack a Running agent. */
export function coverageOf(nodes: NodeSummary[], pods: V1Pod[]): Coverage {
  const running = new Set(pods.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp).map((p) => p.spec?.nodeName ?? ''));
  const eligible = nodes.filter((n) => n.ready && n.schedulable);
  return { nodes: nodes.length, missing: eligible.filter((n) => !running.has(n.name)).map((n) => n.name).sort(), agentsRunning: running.size };
}

export class ClusterInventory {
  private informer: (Informer<V1Pod> & ObjectCache<V1Pod>) | undefined;
  private nodes: NodeSummary[] = [];
  private stopped = false;
  private restart: NodeJS.Timeout | undefined;

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
    this.informer = makeInformer(this.kc, `/api/v1/namespaces/${this.namespace}/pods`, () => core.listNamespacedPod({ namespace: this.namespace, labelSelector: this.agentSelector }), this.agentSelector);
    this.informer.on('error', (err: unknown) => {
      if (this.stopped) return;
      this.log.warn('agent pod watch failed; restarting', { error: (err as Error)?.message });
      this.restart = setTimeout(() => void this.informer?.start().catch(() => undefined), 2000);
      this.restart.unref();
    });
    await this.informer.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restart);
    await this.informer?.stop();
  }

  async refreshNodes(): Promise<NodeSummary[]> {
    await this.refreshNodeObjects();
    return this.nodes;
  }

  /** Lists the nodes (one request) and returns them whole: the cluster description reads their annotations and nodeInfo. */
  async refreshNodeObjects(): Promise<readonly V1Node[]> {
    const core = this.kc.makeApiClient(CoreV1Api);
    const list = await this.pacer.run('list nodes', () => core.listNode());
    this.nodes = list.items.map(summarizeNode);
    return list.items;
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
