/**
 * What both lab kube-proxy emulations share: the run's own Services under
 * stable ClusterIPs, and a sweep's dummy Services added or removed by index in
 * batches. A mode supplies only how to render and apply rules (LabRules).
 */

import type { ClusterDescription } from '../core/cluster.js';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import type {
  ExtraServicePort,
  ScaleStep,
  ServiceAddress,
  ServiceEndpoint,
  ServiceFrontend,
  ServiceScaler,
  SyncTarget,
} from '../core/service-frontend.js';
import { dummyRange } from './dummy-services.js';
import type { LabService } from './kube-proxy-iptables.js';
import { ServiceIps } from './service-ips.js';

export interface LabRules {
  /** Services per batch when a step adds or removes many (Infinity: one batch). */
  readonly batchServices: number;
  /** Writes base rules into every node. */
  init(): Promise<void>;
  add(services: readonly LabService[]): Promise<void>;
  delete(services: readonly LabService[]): Promise<void>;
  /** Gives existing Service ports new endpoints in one transaction per node (the old and the new, port by port). */
  replaceEndpoints(before: readonly LabService[], after: readonly LabService[]): Promise<void>;
  /** What every node must show once `total` Services (dummies and the run's own) are programmed. */
  expect(total: number): SyncTarget;
}

export abstract class LabProxyBase implements ServiceFrontend, ServiceScaler {
  abstract readonly description: string;
  /** kube-proxy's mode as the lab programs it, e.g. "iptables (legacy)". */
  protected abstract readonly proxyMode: string;
  readonly scale = this;
  /** The run's own Services by name, one LabService per port (kube-proxy keeps one chain per Service port). */
  private readonly services = new Map<string, LabService[]>();
  private readonly ips = new ServiceIps();
  private dummies = 0;
  private dummyEndpoints = 0;

  protected constructor(protected readonly rules: LabRules) {}

  get cluster(): Partial<ClusterDescription> {
    return { kubernetesVersion: 'none (lab)', cni: 'lab bridge', cniMode: 'routed', kubeProxyMode: this.proxyMode };
  }

  async init(): Promise<void> {
    await this.rules.init();
  }

  async expose(
    name: string,
    port: number,
    endpoints: ServiceEndpoint[],
    extraPorts: readonly ExtraServicePort[] = [],
  ): Promise<ServiceAddress> {
    if (this.services.has(name)) throw new CniBenchError(ErrorCodes.CONFLICT, `lab service '${name}' exists`);
    const clusterIp = this.ips.allocate(name);
    const svcs: LabService[] = [
      { namespace: 'cni-bench', name, portName: 'p', clusterIp, port, protocol: 'tcp', endpoints },
      ...extraPorts.map(
        (x): LabService => ({
          namespace: 'cni-bench',
          name,
          portName: x.name,
          clusterIp,
          port: x.port,
          protocol: 'tcp',
          endpoints: endpoints.map((e) => ({ ip: e.ip, port: x.targetPort })),
        }),
      ),
    ];
    await this.rules.add(svcs);
    this.services.set(name, svcs);
    return { ip: clusterIp, port };
  }

  async remove(name: string): Promise<void> {
    const svcs = this.services.get(name);
    if (!svcs) return;
    this.services.delete(name);
    await this.rules.delete(svcs);
  }

  /** A run Service's endpoints replaced in one transaction per node, as kube-proxy applies an EndpointSlice change. */
  async setEndpoints(name: string, endpoints: ServiceEndpoint[]): Promise<void> {
    const before = this.services.get(name);
    if (!before) throw new CniBenchError(ErrorCodes.NOT_FOUND, `lab service '${name}' does not exist`);
    const after = before.map((s, i) => ({
      ...s,
      // Extra ports keep their own target port on the new endpoints.
      endpoints: endpoints.map((e) => ({ ip: e.ip, port: i === 0 ? e.port : (s.endpoints[0]?.port ?? e.port) })),
    }));
    await this.rules.replaceEndpoints(before, after);
    this.services.set(name, after);
  }

  /** Service ports the run's own Services program (what the sync targets count beside the dummies). */
  private get ownPorts(): number {
    let n = 0;
    for (const s of this.services.values()) n += s.length;
    return n;
  }

  /** Removes dummies [to, from) from the top, one batch at a time; `dummies` follows what is really programmed. */
  private async shrink(to: number, endpoints: number): Promise<void> {
    while (this.dummies > to) {
      const from = Math.max(to, this.dummies - this.rules.batchServices);
      await this.rules.delete(dummyRange(from, this.dummies, endpoints));
      this.dummies = from;
    }
  }

  async setDummyServices(count: number, endpointsPerService: number): Promise<ScaleStep> {
    const began = Date.now();
    if (this.dummies > 0 && endpointsPerService !== this.dummyEndpoints) await this.shrink(0, this.dummyEndpoints);
    this.dummyEndpoints = endpointsPerService;
    await this.shrink(count, endpointsPerService);
    while (this.dummies < count) {
      const to = Math.min(count, this.dummies + this.rules.batchServices);
      await this.rules.add(dummyRange(this.dummies, to, endpointsPerService));
      this.dummies = to;
    }
    return { services: count, programmingMs: Date.now() - began, expect: this.rules.expect(count + this.ownPorts) };
  }
}
