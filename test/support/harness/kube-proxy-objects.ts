/**
 * The lab's Service description (LabService) as the Kubernetes objects a real
 * kube-proxy consumes: a ClusterIP Service with that exact spec.clusterIP and
 * one named TCP port, and a discovery.k8s.io/v1 EndpointSlice with one ready
 * endpoint per address. Pure; the same LabService then feeds the lab's
 * emulation, so both sides describe the same Services.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { dummyService } from '../../../lab/dummy-services.js';
import type { LabService } from '../../../lab/kube-proxy-iptables.js';

/**
 * The Services test/integration/k8s-kube-proxy.test.ts gives the real
 * kube-proxy and the emulation (and test/fixtures/kube-proxy-real/ holds the
 * real one's rules for): 1, 2 and 4 endpoints, and a scale sweep's own dummy
 * Service (one endpoint IP on three ports, so three EndpointSlices).
 */
export const COMPARED_SERVICES: readonly LabService[] = [
  ...[1, 2, 4].map(
    (n, i): LabService => ({
      namespace: 'cni-bench-kp',
      name: `svc-${n}ep`,
      portName: 'p',
      clusterIp: `198.19.129.${10 + i}`,
      port: 80,
      protocol: 'tcp',
      endpoints: Array.from({ length: n }, (_, k) => ({ ip: `198.18.${200 + i}.${10 + k}`, port: 8080 })),
    }),
  ),
  dummyService(0, 3),
];

/**
 * One EndpointSlice per distinct endpoint port: a slice's ports apply to all of
 * its endpoints, so endpoints of one Service on different ports (the lab's
 * dummy Services share one IP) need a slice each.
 */
export function serviceObjects(s: LabService): KubernetesObject[] {
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: s.name, namespace: s.namespace },
    spec: {
      type: 'ClusterIP',
      clusterIP: s.clusterIp,
      ports: [{ name: s.portName, port: s.port, protocol: s.protocol.toUpperCase() }],
    },
  };
  const byPort = new Map<number, string[]>();
  for (const ep of s.endpoints) byPort.set(ep.port, [...(byPort.get(ep.port) ?? []), ep.ip]);
  const slices = [...byPort].map(([port, ips], i) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${s.name}-${i}`, namespace: s.namespace, labels: { 'kubernetes.io/service-name': s.name } },
    addressType: 'IPv4',
    ports: [{ name: s.portName, port, protocol: s.protocol.toUpperCase() }],
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true, serving: true, terminating: false } })),
  }));
  return [service, ...slices] as KubernetesObject[];
}
