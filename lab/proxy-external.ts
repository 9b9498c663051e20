/**
 * The lab without kube-proxy emulation: something outside the lab (a real
 * kube-proxy per node namespace, watching a real apiserver) programs the
 * nodes, and Services are created through that cluster's API. So this writes
 * nothing, and it refuses to act as the run's service frontend: a Service it
 * "exposed" would exist in no kube-proxy's view, and measurements through it
 * would fail far from the cause.
 */

import type { ClusterDescription } from '../core/cluster.js';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import type { ScaleStep, ServiceAddress, ServiceFrontend, ServiceScaler } from '../core/service-frontend.js';

function notAFrontend(what: string): CniBenchError {
  return new CniBenchError(
    ErrorCodes.LAB,
    `lab proxy mode 'external': ${what} refused; an external kube-proxy programs the nodes, so create Services through its apiserver (the collector's KubernetesServiceFrontend), not through the lab`,
    { details: { proxyMode: 'external', operation: what } },
  );
}

export class LabExternalProxy implements ServiceFrontend, ServiceScaler {
  readonly mode = 'external' as const;
  readonly description = 'external kube-proxy (lab programs no rules)';
  readonly scale = this;
  readonly cluster: Partial<ClusterDescription> = { cni: 'lab bridge', cniMode: 'routed' };

  /** Nothing to write: the external kube-proxy owns every node's rules. */
  async init(): Promise<void> {}

  async expose(name: string): Promise<ServiceAddress> {
    throw notAFrontend(`expose('${name}')`);
  }

  /** Nothing was exposed, so there is nothing to remove (the orchestrator's cleanup may still call it). */
  async remove(): Promise<void> {}

  async setDummyServices(count: number): Promise<ScaleStep> {
    throw notAFrontend(`setDummyServices(${count})`);
  }
}
