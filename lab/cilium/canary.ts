/**
 * The proof that a restarted Cilium lab carries Service traffic again, in the
 * dataplane rather than from cilium-dbg's word: one canary Service per node
 * (a selector-less ClusterIP Service and its EndpointSlice) in front of a
 * listener in that node's last pod, and, after each agent restart, a real TCP
 * connection from the restarted node's first pod (in its cgroup: Cilium's
 * socket LB translates only there) to every canary's ClusterIP,
 * retried until it connects. A restarted agent reports ready before it has
 * filled its fresh LB maps from the apiserver and regenerated its endpoints:
 * a run measuring then found its Service unreachable ("never connected").
 * The canaries stay until the lab goes, so the LB maps' counts hold still
 * between sweep steps.
 */
import type { CoreV1Api, DiscoveryV1Api, V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { type LongRunning, run } from '../../core/process.js';
import type { LabPlan } from '../plan.js';
import { classifyProbe, type ProbeOutcome, probeArgv, startListener } from '../policy/probe.js';
import { LAB_LABEL, LAB_POD_NAMESPACE } from './objects.js';

/** The canaries' listeners' port in each node's first pod (the policy probe's is 39,099). */
export const CANARY_PORT = 39_098;
const PROBE_TIMEOUT_MS = 1000;
const RETRY_MS = 250;

/** Pure: canary Service `name` in front of `ip`:`port` (one endpoint), labelled with the lab's id. */
export function canaryObjects(
  name: string,
  ip: string,
  port: number,
  labId: string,
): { service: V1Service; slice: V1EndpointSlice } {
  const labels = { [LAB_LABEL]: labId, 'app.kubernetes.io/name': 'cni-bench-lab-canary' };
  return {
    service: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: LAB_POD_NAMESPACE, labels },
      spec: { type: 'ClusterIP', ports: [{ name: 'p', port, protocol: 'TCP', targetPort: port }] },
    },
    slice: {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name,
        namespace: LAB_POD_NAMESPACE,
        labels: {
          ...labels,
          'kubernetes.io/service-name': name,
          'endpointslice.kubernetes.io/managed-by': 'lab.cni-bench.io',
        },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: [ip], conditions: { ready: true, serving: true, terminating: false } }],
      ports: [{ name: 'p', port, protocol: 'TCP' }],
    },
  };
}

/**
 * Pure: the probe's argv run as a member of the pod's cgroup (`cgroupDir`), as
 * the lab's pod processes are: Cilium's socket LB translates a Service address
 * only for sockets of the cgroup subtree it is attached to, so a probe from
 * outside it would never reach a ClusterIP.
 */
export function podProbeArgv(cgroupDir: string, podNs: string, ip: string, port: number, timeoutMs: number): string[] {
  return [
    '-c',
    'cg=$1; shift; echo $$ > "$cg/cgroup.procs"; exec "$@"',
    'lab-canary',
    cgroupDir,
    'ip',
    ...probeArgv(podNs, ip, port, timeoutMs),
  ];
}

async function podProbe(cgroupDir: string, podNs: string, ip: string, port: number): Promise<ProbeOutcome> {
  const r = await run('sh', podProbeArgv(cgroupDir, podNs, ip, port, PROBE_TIMEOUT_MS), {
    tool: 'tcp-probe',
    okExitCodes: [0, 1, 124],
    timeoutMs: PROBE_TIMEOUT_MS + 10_000,
  });
  return classifyProbe(r.exitCode, r.stderr);
}

export class RestartCanary {
  private constructor(
    private readonly plan: LabPlan,
    private readonly listeners: LongRunning[],
    /** Each canary's ClusterIP, by node index. */
    readonly addresses: readonly string[],
  ) {}

  /** Listeners in every node's first pod and a canary Service in front of each. */
  static async start(plan: LabPlan, core: CoreV1Api, discovery: DiscoveryV1Api): Promise<RestartCanary> {
    const listeners: LongRunning[] = [];
    const addresses: string[] = [];
    try {
      for (const node of plan.nodes) {
        // The node's last pod: on a node with two, the probe from its first pod crosses the veths.
        const pod = node.pods[node.pods.length - 1];
        if (!pod?.ip) throw new CniBenchError(ErrorCodes.LAB, `cilium lab canary: ${node.name} has no wired pod`);
        listeners.push(await startListener(pod.ns, CANARY_PORT));
        const o = canaryObjects(`cni-bench-canary-n${node.index}`, pod.ip, CANARY_PORT, plan.id);
        const svc = await core.createNamespacedService({ namespace: LAB_POD_NAMESPACE, body: o.service });
        await discovery.createNamespacedEndpointSlice({ namespace: LAB_POD_NAMESPACE, body: o.slice });
        const ip = svc.spec?.clusterIP;
        if (!ip) throw new CniBenchError(ErrorCodes.LAB, `cilium lab canary on ${node.name}: no ClusterIP allocated`);
        addresses.push(ip);
      }
    } catch (err) {
      await Promise.allSettled(listeners.map((l) => l.stop()));
      throw err;
    }
    return new RestartCanary(plan, listeners, addresses);
  }

  /** Connects from node `index`'s first pod through every canary Service until each connects; the time it took. */
  async reachableFrom(index: number, timeoutMs: number, signal?: AbortSignal): Promise<number> {
    const began = Date.now();
    const node = this.plan.nodes[index];
    const from = node?.pods[0]?.ns ?? '';
    const cgroup = node?.podCgroup;
    if (!cgroup) throw new CniBenchError(ErrorCodes.LAB, `cilium lab canary: node ${index} has no pod cgroup`);
    for (const [to, ip] of this.addresses.entries()) {
      let last = '';
      for (;;) {
        if (signal?.aborted)
          throw new CniBenchError(ErrorCodes.CANCELLED, 'interrupted while probing the canary Services');
        last = await podProbe(cgroup, from, ip, CANARY_PORT);
        if (last === 'connected') break;
        if (Date.now() - began > timeoutMs)
          throw new CniBenchError(
            ErrorCodes.TIMEOUT,
            `cilium lab: after the agent restart, node ${index}'s pod cannot connect through canary Service ${ip}:${CANARY_PORT} (backend on node ${to}): ${last} for ${Math.round(timeoutMs / 1000)} s`,
          );
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
    return Date.now() - began;
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.listeners.map((l) => l.stop()));
  }
}
