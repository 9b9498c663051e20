/**
 * A real NetworkPolicy enforcer for the iptables and nftables labs, which have
 * no Kubernetes control plane of their own: the lab's control plane
 * (lab/k8s/control-plane.ts), a Node per lab node and a Pod per lab pod with
 * the status a kubelet would write (the same objects the Cilium lab makes),
 * and kube-router's network policy controller (v2.1.0, --run-firewall only:
 * iptables filter chains and ipsets) in every node namespace, reading the
 * apiserver over the lab fabric. SIG Network's kube-network-policies is built
 * too (scripts/build-kube-network-policies.sh) but cannot run on a kernel
 * without nft_queue; support.ts detects that, and this enforcer is used instead.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { arch, release } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { type LongRunning, run, spawnLongRunning } from '../../core/process.js';
import { labPodName } from '../cilium/dataplane.js';
import { LAB_POD_NAMESPACE, nodeObject, nodeStatus, podObject, runningPodStatus } from '../cilium/objects.js';
import { waitFor } from '../cilium/wait.js';
import { type LabControlPlane, startLabControlPlane } from '../k8s/control-plane.js';
import { TOOLS_DIR } from '../k8s/tools.js';
import { CLUSTER_CIDR, type LabPlan, SERVICE_CIDR } from '../plan.js';
import { labRunDir } from '../state.js';

export const KUBE_ROUTER_VERSION = 'v2.1.0';

export function kubeRouterPath(): string {
  const path = join(TOOLS_DIR, 'bin', 'kube-router');
  if (!existsSync(path))
    throw new CniBenchError(
      ErrorCodes.TOOL_MISSING,
      `${path} is missing; build it with 'bash scripts/build-kube-network-policies.sh' (or scripts/setup.sh --test)`,
      { details: { tool: 'kube-router' } },
    );
  return path;
}

/** Pure: kube-router as a policy controller only (no routing, no service proxy, no CNI, no ports opened). */
export function kubeRouterArgs(nodeName: string, kubeconfig: string): string[] {
  return [
    '--run-firewall=true',
    '--run-router=false',
    '--run-service-proxy=false',
    '--run-loadbalancer=false',
    '--enable-cni=false',
    '--enable-ipv4=true',
    '--enable-ipv6=false',
    `--kubeconfig=${kubeconfig}`,
    `--hostname-override=${nodeName}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--health-port=0',
    '--metrics-port=0',
    '-v=1',
  ];
}

export class PolicyEnforcer {
  private readonly routers = new Map<number, LongRunning>();
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;

  private constructor(
    private readonly plan: LabPlan,
    readonly controlPlane: LabControlPlane,
    private readonly kubeconfig: string,
    private readonly log: Logger,
  ) {
    this.kc = new KubeConfig();
    this.kc.loadFromFile(controlPlane.adminKubeconfig);
    this.core = this.kc.makeApiClient(CoreV1Api);
  }

  static async start(plan: LabPlan, log: Logger): Promise<PolicyEnforcer> {
    const binary = kubeRouterPath();
    const dir = join(labRunDir(plan.id), 'k8s');
    const cp = await startLabControlPlane({
      dir,
      fabricNs: plan.fabricNs,
      clusterCidr: CLUSTER_CIDR,
      serviceCidr: SERVICE_CIDR,
      nodeCidrMask: 24,
    });
    const kubeconfig = join(dir, 'kube-router.kubeconfig');
    writeFileSync(kubeconfig, cp.labKubeconfigText(), { mode: 0o600 });
    const e = new PolicyEnforcer(plan, cp, kubeconfig, log);
    try {
      await e.register();
      for (const n of plan.nodes) e.startOn(n.index, binary);
      for (const n of plan.nodes) await e.waitProgrammed(n.index);
    } catch (err) {
      await e.stop();
      throw err;
    }
    return e;
  }

  /** Namespace, its default ServiceAccount, Nodes and Pods with the status a kubelet writes. */
  private async register(): Promise<void> {
    const core = this.core;
    await core.createNamespace({ body: { metadata: { name: LAB_POD_NAMESPACE } } });
    await core
      .createNamespacedServiceAccount({ namespace: LAB_POD_NAMESPACE, body: { metadata: { name: 'default' } } })
      .catch((err: { code?: number }) => {
        if (err.code !== 409) throw err;
      });
    const facts = { kernel: release(), osImage: 'Linux', architecture: arch() === 'x64' ? 'amd64' : arch() };
    for (const n of this.plan.nodes) {
      await core.createNode({ body: nodeObject(n.name, this.plan.id) });
      await waitFor(
        `${n.name}'s status written`,
        async () => {
          const node = await core.readNode({ name: n.name });
          await core.replaceNodeStatus({
            name: n.name,
            body: { ...node, status: nodeStatus(n.name, n.underlayIp, facts) },
          });
          return true;
        },
        30_000,
        100,
      );
      for (const [j, pod] of n.pods.entries()) {
        const name = labPodName(n.index, j);
        const agent = j === 0 || (j === 1 && n.index === 0);
        const created = await core.createNamespacedPod({
          namespace: LAB_POD_NAMESPACE,
          body: podObject(name, n.name, this.plan.id, agent),
        });
        await core.replaceNamespacedPodStatus({
          name,
          namespace: LAB_POD_NAMESPACE,
          body: { ...created, status: runningPodStatus(pod.ip, n.underlayIp) },
        });
      }
    }
  }

  private startOn(index: number, binary: string): void {
    const node = this.plan.nodes[index];
    if (!node) return;
    this.routers.set(
      index,
      spawnLongRunning('ip', ['netns', 'exec', node.ns, binary, ...kubeRouterArgs(node.name, this.kubeconfig)], {
        tool: 'kube-router',
      }),
    );
  }

  /** Waits until kube-router's top-level chain is in the node's filter table: the controller is up and programming. */
  private async waitProgrammed(index: number): Promise<void> {
    const node = this.plan.nodes[index];
    if (!node) return;
    await waitFor(
      `kube-router on ${node.name} to program its chains`,
      async () => {
        const exited = await Promise.race([
          this.routers.get(index)?.exited.then((r) => r),
          new Promise<undefined>((r) => setTimeout(() => r(undefined), 10)),
        ]);
        if (exited)
          throw new CniBenchError(
            ErrorCodes.LAB,
            `kube-router on ${node.name} exited with ${exited.exitCode}: ${exited.stderr.slice(-600)}`,
          );
        const r = await run('ip', ['netns', 'exec', node.ns, 'iptables', '-S', 'KUBE-ROUTER-FORWARD'], {
          tool: 'iptables',
          okExitCodes: [0, 1],
          timeoutMs: 10_000,
        });
        return r.exitCode === 0 ? true : undefined;
      },
      60_000,
      200,
    );
    this.log.info('kube-router policy controller running', { node: node.name });
  }

  /** Stops one node's enforcer (the failure tests stop it on purpose); its rules stay, new policies are not programmed. */
  /** The running kube-routers' pids (ip netns exec execs the binary, so the pid is kube-router's). */
  get pids(): number[] {
    return [...this.routers.values()].map((r) => r.pid).filter((p): p is number => p !== undefined);
  }

  async stopOn(index: number): Promise<void> {
    await this.routers.get(index)?.stop();
    this.routers.delete(index);
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.routers.values()].map((r) => r.stop()));
    this.routers.clear();
    await this.controlPlane
      .stop()
      .catch((err: Error) => this.log.warn('policy control plane stop failed', { error: err.message }));
  }
}
