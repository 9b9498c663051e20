/**
 * The Kubernetes objects the collector creates, as plain data: a Service
 * without selector plus its discovery.k8s.io/v1 EndpointSlice, for the run's
 * own "via ClusterIP Service" path and for a scale sweep's dummy Services.
 * Every object carries the labels that cleanup selects on. Pure.
 */
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'cni-bench';
export const RUN_ID_LABEL = 'cni-bench.io/run-id';
export const ROLE_LABEL = 'cni-bench.io/object';
/** The EndpointSlice controller leaves slices with another managed-by alone. */
export const SLICE_MANAGER = 'collector.cni-bench.io';
/** Fake endpoints of dummy Services: nothing answers there (RFC 2544 benchmarking range). */
export const MAX_ENDPOINTS_PER_DUMMY = 128;

/** Selects everything the collector made (all runs), for start-up cleanup. */
export const ALL_MANAGED = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;

export function runSelector(runId: string): string {
  return `${ALL_MANAGED},${RUN_ID_LABEL}=${runId}`;
}

export interface ServicePair {
  service: V1Service;
  slice: V1EndpointSlice;
}

export interface EndpointAddress {
  ip: string;
  port: number;
}

/** A selector-less ClusterIP Service in front of `endpoints` (all on one port, as an EndpointSlice requires). */
export function servicePair(
  namespace: string,
  name: string,
  port: number,
  endpoints: EndpointAddress[],
  runId: string,
  role: 'frontend' | 'scale-dummy',
  extraPorts: readonly { name: string; port: number; targetPort: number }[] = [],
): ServicePair {
  const targetPort = endpoints[0]?.port ?? port;
  if (endpoints.some((e) => e.port !== targetPort)) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `service ${name}: endpoints listen on different ports; one EndpointSlice port fits all`,
      { details: { field: 'endpoints' } },
    );
  }
  const labels = { [MANAGED_BY_LABEL]: MANAGED_BY, [RUN_ID_LABEL]: runId, [ROLE_LABEL]: role };
  return {
    service: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace, labels },
      spec: {
        type: 'ClusterIP',
        ports: [
          { name: 'p', port, protocol: 'TCP', targetPort },
          ...extraPorts.map((x) => ({ name: x.name, port: x.port, protocol: 'TCP', targetPort: x.targetPort })),
        ],
      },
    },
    slice: {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name,
        namespace,
        labels: {
          ...labels,
          'kubernetes.io/service-name': name,
          'endpointslice.kubernetes.io/managed-by': SLICE_MANAGER,
        },
      },
      addressType: 'IPv4',
      endpoints: endpoints.map((e) => ({
        addresses: [e.ip],
        conditions: { ready: true, serving: true, terminating: false },
      })),
      ports: [
        { name: 'p', port: targetPort, protocol: 'TCP' },
        ...extraPorts.map((x) => ({ name: x.name, port: x.targetPort, protocol: 'TCP' })),
      ],
    },
  };
}

export function dummyName(i: number): string {
  return `cni-bench-dummy-${i}`;
}

/**
 * Dummy Service i with `endpoints` fake endpoints in 198.18.128.0/17: endpoint
 * k's third octet is 128 + ((37k + i/256) mod 128), distinct within a Service
 * for k < 128 (37 is odd), so kube-proxy programs every endpoint. With
 * `clusterIp` the Service asks for that address instead of a dynamic one.
 */
export function dummyPair(
  namespace: string,
  i: number,
  endpoints: number,
  runId: string,
  clusterIp?: string,
): ServicePair {
  if (!Number.isInteger(endpoints) || endpoints < 1 || endpoints > MAX_ENDPOINTS_PER_DUMMY) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `serviceScale.endpointsPerService: 1 to ${MAX_ENDPOINTS_PER_DUMMY} in a cluster, got ${endpoints}`,
      { details: { field: 'serviceScale.endpointsPerService' } },
    );
  }
  const eps = Array.from({ length: endpoints }, (_, k) => ({
    ip: `198.18.${128 + ((37 * k + (i >> 8)) & 127)}.${i & 255}`,
    port: 10_000,
  }));
  const pair = servicePair(namespace, dummyName(i), 80, eps, runId, 'scale-dummy');
  // A requested ClusterIP skips the apiserver's dynamic allocation (see KubernetesFrontendOptions.dummyClusterIp).
  if (clusterIp && pair.service.spec) pair.service.spec.clusterIP = clusterIp;
  return pair;
}
