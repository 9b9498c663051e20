/**
 * A lab: N lab nodes on this machine, each a network namespace acting as the
 * host with pod namespaces behind a bridge, kube-proxy's rules (iptables or
 * nftables mode) in every node, and one cni-bench agent per node running in its first pod. The
 * lab owns everything it creates and `destroy` removes all of it; leftovers of
 * a lab that was killed are removed when the next one starts.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AGENT_MAIN, AGENT_NODE_FLAGS } from '../agent/index.js';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { netnsArgv } from '../core/netns.js';
import { type LongRunning, run, spawnLongRunning } from '../core/process.js';
import { PEER_ROLE_LABEL } from '../core/tools.js';
import { LabAgentIdentities } from './agent-identity.js';
import { removeLeftovers } from './cleanup.js';
import { allowedCpus, nodeCpuSets, onNodeCpus } from './cpu-sets.js';
import { createTopology, deleteNamespaces, listNamespaces, shapeUplinks } from './netns.js';
import { type LabNode, type LabPlan, type LabPod, labNamespacePrefix, planLab } from './plan.js';
import { PodLinks } from './pod-link.js';
import { attachConditions } from './policy/attach.js';
import type { PolicyEnforcer } from './policy/enforcer.js';
import { createLabProxy, isCiliumMode, type LabProxy, type LabProxyOptions } from './proxy.js';
import { labRunDir, removeLabState, writeLabState } from './state.js';

export interface LabOptions {
  nodes: number;
  log: Logger;
  id?: string;
  /** Which kube-proxy the lab emulates (default iptables mode, legacy backend), or 'external': none, a real one programs the nodes. */
  proxy?: LabProxyOptions;
  /** Shape every node's uplink to this rate (tc tbf), to stand for a real NIC; default unshaped. */
  linkMbit?: number;
  /** Monitoring mode: each node's agent (not node 0's peer) probes its peers and exports dataplane gauges. */
  monitor?: LabMonitorOptions;
  /** Let every node use every CPU instead of giving each its own share (cpu-sets.ts); default false. */
  shareCpus?: boolean;
  /** Aborts the creation (SIGINT while a Cilium lab starts); what exists is removed. */
  signal?: AbortSignal;
  /** iptables/nftables labs: run a real NetworkPolicy enforcer (lab/policy/enforcer.ts) for policy conditions. */
  policyEnforcer?: boolean;
}

/** Monitoring settings for the lab's agents (unset fields keep the agent's defaults). */
export interface LabMonitorOptions {
  intervalS?: number;
  peers?: number;
  timeoutMs?: number;
  jitter?: number;
  /** BPF map name prefixes whose entries the agents count. */
  bpfMaps?: string[];
}

/**
 * Lets a pod reach itself through a Service (kubelet's hairpin-veth mode): the
 * node's bridge netfilter DNATs at the bridge, and without hairpin the bridge
 * drops a frame sent back out of the port it came in on. Monitoring's Service
 * probes land on the prober's own pod for one endpoint in N.
 */
async function enableHairpin(plan: LabPlan): Promise<void> {
  for (const node of plan.nodes) {
    for (const pod of node.pods)
      await run('ip', ['-n', node.ns, 'link', 'set', 'dev', pod.hostIf, 'type', 'bridge_slave', 'hairpin', 'on'], {
        tool: 'ip',
        timeoutMs: 10_000,
      });
  }
}

/** Agent flags for monitoring mode. */
export function monitorArgs(m: LabMonitorOptions): string[] {
  const opt = (flag: string, v: number | string[] | undefined): string[] =>
    v === undefined ? [] : [flag, Array.isArray(v) ? v.join(',') : String(v)];
  return [
    '--monitor',
    ...opt('--monitor-interval-s', m.intervalS),
    ...opt('--monitor-peers', m.peers),
    ...opt('--monitor-timeout-ms', m.timeoutMs),
    ...opt('--monitor-jitter', m.jitter),
    ...opt('--monitor-bpf-maps', m.bpfMaps),
  ];
}

/**
 * Runs file+args as a member of cgroup `dir` (its children too): a constant
 * script joins the cgroup and execs, so the pid stays the process's own. Pod
 * processes of a Cilium lab join their node's subtree, the scope of that node's
 * socket load balancer.
 */
export function inCgroup(dir: string, file: string, args: readonly string[]): [string, string[]] {
  return ['sh', ['-c', 'cg=$1; shift; echo $$ > "$cg/cgroup.procs"; exec "$@"', 'lab-pod', dir, file, ...args]];
}

/** Node 0 has a second pod with a "peer" agent, the client of same-node measurements. */
const PODS_PER_NODE = 2;

export class Lab {
  private readonly agents: LongRunning[] = [];
  private destroyed = false;
  /** The iptables/nftables lab's NetworkPolicy enforcer, when started (lab/policy/). */
  policy: PolicyEnforcer | undefined;

  private constructor(
    readonly plan: LabPlan,
    readonly services: LabProxy,
    private readonly log: Logger,
    readonly monitor?: LabMonitorOptions,
  ) {
    this.identities = new LabAgentIdentities(labRunDir(plan.id));
  }

  /** Each node's own agent identity (agent-identity.ts). */
  readonly identities: LabAgentIdentities;

  /** The key the lab's collector is started with (agentKeyFile): its agents must then each present their own node's token. */
  get agentKeyFile(): string {
    return this.identities.keyFile;
  }

  /** Unix socket path agents use to reach the collector (control traffic never crosses the lab's links). */
  get controlSocket(): string {
    return join(labRunDir(this.plan.id), 'collector.sock');
  }

  static async create(opts: LabOptions): Promise<Lab> {
    const id = opts.id ?? randomBytes(4).toString('hex');
    const plan = planLab(id, opts.nodes, PODS_PER_NODE);
    const cpuSets = opts.shareCpus ? undefined : nodeCpuSets(plan.nodes.length, await allowedCpus());
    if (cpuSets) for (const [i, n] of plan.nodes.entries()) n.cpus = cpuSets[i];
    await removeLeftovers(opts.log);
    await writeLabState(id);
    await mkdir(labRunDir(id), { recursive: true });
    const proxy = opts.proxy ?? { mode: 'iptables', iptablesBackend: 'legacy' };
    const cilium = isCiliumMode(proxy.mode);
    const lab = new Lab(plan, createLabProxy(plan, proxy, opts.log), opts.log, opts.monitor);
    try {
      await createTopology(plan, cilium ? 'cni' : 'bridge');
      if (opts.linkMbit !== undefined) await shapeUplinks(plan, opts.linkMbit);
      if (opts.monitor && !cilium) await enableHairpin(plan);
      await lab.services.init(opts.signal);
      lab.policy = await attachConditions(plan, lab.services, opts.policyEnforcer ?? false, opts.log);
      const links = new PodLinks(plan);
      lab.services.cutEndpointLink = (endpoint) => links.cut(endpoint);
      lab.services.restoreEndpointLinks = () => links.restoreAll();
    } catch (err) {
      await lab.destroy();
      throw new CniBenchError(ErrorCodes.LAB, `cannot create lab: ${(err as Error).message}`, { cause: err });
    }
    opts.log.info('lab created', {
      id,
      nodes: plan.nodes.length,
      cpus: cpuSets ? cpuSets.map((c) => c.join(',')).join(' | ') : 'shared by all nodes',
    });
    return lab;
  }

  /** Starts one agent per node inside the node's first pod namespace. */
  startAgents(collectorAddress: string, extraArgs: string[] = []): void {
    for (const node of this.plan.nodes) {
      const [pod, second] = node.pods;
      const monitoring = this.monitor ? monitorArgs(this.monitor) : [];
      if (pod)
        this.startAgent(node, pod, collectorAddress, [`cni-bench-agent-${node.index}`, ...monitoring], extraArgs);
      if (second && node.index === 0) {
        this.startAgent(
          node,
          second,
          collectorAddress,
          [
            `cni-bench-agent-peer-${node.index}`,
            '--agent-name',
            `${node.name}-peer`,
            '--label',
            `${PEER_ROLE_LABEL}=peer`,
          ],
          extraArgs,
        );
      }
    }
  }

  /** Agents this lab starts (the peer included). */
  get agentCount(): number {
    return this.plan.nodes.length + 1;
  }

  private startAgent(
    node: LabNode,
    pod: LabPod,
    collectorAddress: string,
    [podName, ...own]: string[],
    extraArgs: string[],
  ): void {
    const args = [
      ...AGENT_NODE_FLAGS,
      AGENT_MAIN,
      '--collector',
      collectorAddress,
      '--node-name',
      node.name,
      '--pod-name',
      podName as string,
      '--pod-ip',
      pod.ip,
      '--host-ip',
      node.underlayIp,
      '--host-netns',
      `/run/netns/${node.ns}`,
      '--label',
      `lab=${this.plan.id}`,
      // Its node's own token (a collector without the lab's key ignores it), unless the caller brings one.
      ...(extraArgs.includes('--token-file') ? [] : ['--token-file', this.identities.tokenFile(node.name)]),
      ...own,
      ...extraArgs,
    ];
    const [pinned, pinnedArgs] = netnsArgv({ name: pod.ns }, ...onNodeCpus(node.cpus, process.execPath, args));
    const [file, argv] = node.podCgroup ? inCgroup(node.podCgroup, pinned, pinnedArgs) : [pinned, pinnedArgs];
    this.agents.push(
      spawnLongRunning(file, argv, {
        tool: 'cni-bench-agent',
        env: { ...process.env, CNI_BENCH_LOG_LEVEL: process.env.CNI_BENCH_LOG_LEVEL ?? 'warn' } as Record<
          string,
          string
        >,
      }),
    );
  }

  /** Stops agents, kills anything left in the lab's namespaces and deletes them. Idempotent. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.allSettled(this.agents.map((a) => a.stop()));
    await this.policy?.stop();
    await this.services
      .destroy?.()
      .catch((err: Error) => this.log.error('lab dataplane teardown failed', { error: err.message }));
    const mine = (await listNamespaces().catch(() => [] as string[])).filter((ns) =>
      ns.startsWith(labNamespacePrefix(this.plan.id)),
    );
    await deleteNamespaces(mine);
    await this.services
      .removeCgroups?.()
      .catch((err: Error) => this.log.error('lab cgroup removal failed', { error: err.message }));
    await removeLabState(this.plan.id);
    this.log.info('lab destroyed', { id: this.plan.id, namespaces: mine.length });
  }
}
