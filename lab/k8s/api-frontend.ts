/**
 * What the labs with their own apiserver (Cilium, the real kube-proxy) share as
 * the run's service frontend: the collector's own Kubernetes frontend against
 * the lab's apiserver writes every Service and EndpointSlice, as on a cluster,
 * and each lab adds only how its dataplane is started and verified.
 */
import type { KubernetesServiceFrontend } from '../../collector/index.js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type {
  ExtraServicePort,
  ScalePrepareContext,
  ScaleStep,
  ServiceAddress,
  ServiceEndpoint,
} from '../../core/service-frontend.js';

export abstract class LabApiFrontend {
  readonly scale = this;
  /** Set once the lab's init has its apiserver. */
  protected frontend: KubernetesServiceFrontend | undefined;

  /** The lab's name in errors, e.g. "cilium lab". */
  protected abstract readonly labName: string;

  protected get front(): KubernetesServiceFrontend {
    if (!this.frontend) throw new CniBenchError(ErrorCodes.LAB, `${this.labName}: not initialised`);
    return this.frontend;
  }

  expose(
    name: string,
    port: number,
    endpoints: ServiceEndpoint[],
    extraPorts?: readonly ExtraServicePort[],
  ): Promise<ServiceAddress> {
    // netperf's data connection needs the Service's second port.
    return this.front.expose(name, port, endpoints, extraPorts);
  }

  remove(name: string): Promise<void> {
    return this.front.remove(name);
  }

  /** One PUT of the EndpointSlice; the dataplane applies it on its own schedule, which a disruption phase measures. */
  setEndpoints(name: string, endpoints: ServiceEndpoint[]): Promise<void> {
    return this.front.setEndpoints(name, endpoints);
  }

  setDummyServices(count: number, endpointsPerService: number, runId?: string): Promise<ScaleStep> {
    return this.front.setDummyServices(count, endpointsPerService, runId);
  }

  prepare(
    maxServices: number,
    endpointsPerService: number,
    runId: string,
    context?: ScalePrepareContext,
  ): Promise<void> {
    return this.front.prepare(maxServices, endpointsPerService, runId, context);
  }

  finish(): Promise<void> {
    return this.front.finish();
  }
}
