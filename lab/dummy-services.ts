/**
 * The dummy Services of a scale sweep, as data: ClusterIPs from 198.19.128.0/17
 * (the upper half of the lab's Service range, so they never meet a run's own
 * Services) and fake endpoints in 198.18.128.0/17 that nothing answers on.
 * Pure and deterministic, so a step can be added or removed by index.
 */
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import type { LabService } from './kube-proxy-iptables.js';

export const MAX_DUMMY_SERVICES = 32_000;
export const DUMMY_NAMESPACE = 'cni-bench-scale';

/**
 * Dummy i's ClusterIP, in the upper half of the lab's Service range; a Cilium
 * lab's Kubernetes frontend can ask for these (KubernetesFrontendOptions.dummyClusterIp)
 * instead of having the apiserver allocate each one under its lock.
 */
export function dummyClusterIp(i: number): string {
  return `198.19.${128 + (i >> 8)}.${i & 255}`;
}

export function dummyService(i: number, endpointsPerService: number): LabService {
  if (!Number.isInteger(i) || i < 0 || i >= MAX_DUMMY_SERVICES) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `serviceScale.steps: at most ${MAX_DUMMY_SERVICES} dummy Services fit the lab's range, asked for index ${i}`,
      { details: { field: 'serviceScale.steps' } },
    );
  }
  const ip = dummyClusterIp(i);
  const epIp = `198.18.${128 + ((i >> 8) & 127)}.${i & 255}`;
  return {
    namespace: DUMMY_NAMESPACE,
    name: `dummy-${i}`,
    portName: 'p',
    clusterIp: ip,
    port: 80,
    protocol: 'tcp',
    endpoints: Array.from({ length: endpointsPerService }, (_, k) => ({ ip: epIp, port: 10_000 + k })),
  };
}

/** Dummy Services with indexes from..to-1. */
export function dummyRange(from: number, to: number, endpointsPerService: number): LabService[] {
  const out: LabService[] = [];
  for (let i = from; i < to; i++) out.push(dummyService(i, endpointsPerService));
  return out;
}
