/**
 * The API objects a Cilium lab creates, as data: a Node per lab node (the lab
 * acts as its kubelet: addresses, Ready, node info), a Pod per lab pod (bound
 * to its node, labelled as the agent DaemonSet's pods are), and the status the
 * lab's "kubelet" reports once the CNI plugin wired the pod. Pure.
 */
import type { V1Node, V1NodeStatus, V1Pod, V1PodStatus, V1Taint } from '@kubernetes/client-node';

/** The collector's namespace, where the lab's pods and the run's Services live. */
export const LAB_POD_NAMESPACE = 'cni-bench';
export const LAB_SWEEP_NAMESPACE = 'cni-bench-sweep';
export const LAB_LABEL = 'cni-bench.io/lab';

export interface NodeFacts {
  kernel: string;
  osImage: string;
  architecture: string;
}

export function nodeObject(name: string, labId: string): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', [LAB_LABEL]: labId } },
  };
}

/**
 * The taints the apiserver's TaintNodesByCondition admission puts on a new
 * Node (`node.kubernetes.io/not-ready`) and the node lifecycle controller
 * would lift once it is Ready. The lab runs no lifecycle controller, so it
 * lifts them itself, as it writes Ready in place of a kubelet.
 */
export const LIFECYCLE_TAINT_KEYS: readonly string[] = [
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
];

/** Pure: a node's taints without the lifecycle ones (undefined when none are left). */
export function withoutLifecycleTaints(taints: V1Taint[] | undefined): V1Taint[] | undefined {
  const kept = (taints ?? []).filter((t) => !LIFECYCLE_TAINT_KEYS.includes(t.key));
  return kept.length ? kept : undefined;
}

/** What a kubelet would report: the node's address on the lab fabric, Ready, and the machine's kernel and OS. */
export function nodeStatus(name: string, ip: string, facts: NodeFacts, now = new Date()): V1NodeStatus {
  return {
    addresses: [
      { type: 'InternalIP', address: ip },
      { type: 'Hostname', address: name },
    ],
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'LabNodeReady',
        message: 'cni-bench lab node (network namespace)',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      },
    ],
    nodeInfo: {
      machineID: '',
      systemUUID: '',
      bootID: '',
      kernelVersion: facts.kernel,
      osImage: facts.osImage,
      containerRuntimeVersion: 'none (cni-bench lab: processes in namespaces)',
      kubeletVersion: 'none (cni-bench lab)',
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: facts.architecture,
    },
  };
}

/** Pure: PRETTY_NAME from /etc/os-release text. */
export function osImageFrom(osRelease: string): string {
  return /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease)?.[1] ?? 'Linux';
}

export function podObject(name: string, nodeName: string, labId: string, agent: boolean): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: LAB_POD_NAMESPACE,
      labels: {
        [LAB_LABEL]: labId,
        ...(agent
          ? { 'app.kubernetes.io/name': 'cni-bench-agent' }
          : { 'app.kubernetes.io/name': 'cni-bench-lab-pod' }),
      },
    },
    spec: {
      nodeName,
      automountServiceAccountToken: false,
      containers: [{ name: 'main', image: 'cni-bench-lab (a process in the pod network namespace)' }],
    },
  };
}

/** The status a kubelet reports once the sandbox has its network. */
export function runningPodStatus(podIp: string, hostIp: string, now = new Date()): V1PodStatus {
  return {
    phase: 'Running',
    podIP: podIp,
    podIPs: [{ ip: podIp }],
    hostIP: hostIp,
    hostIPs: [{ ip: hostIp }],
    startTime: now,
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
  };
}
