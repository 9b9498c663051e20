/**
 * Keeps the probe Service (a ClusterIP in front of every monitoring agent's
 * responder, so Service probes exercise the node's service proxy) in line
 * with the eligible agents, through the same ServiceFrontend runs use: the
 * lab's kube-proxy rules, or a Service and EndpointSlice in a cluster. It is
 * changed only between runs (never under a measurement) and one change at a
 * time; a failed change is retried at the next plan.
 */
import type { Logger } from '../../core/log.js';
import type { ServiceEndpoint, ServiceFrontend } from '../../core/service-frontend.js';
import type { ProbeService } from '../../gen/cnibench/v1/agent.js';

export const PROBE_SERVICE_NAME = 'monitor-probe';

export class ProbeServiceManager {
  private current: { key: string; service: ProbeService | undefined } = { key: '[]', service: undefined };
  private busy: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly frontend: ServiceFrontend | undefined,
    private readonly log: Logger,
  ) {}

  get service(): ProbeService | undefined {
    return this.current.service;
  }

  /** Exposes `endpoints` behind the Service on `port` (none: removes it); resolves with what is in place. */
  sync(port: number, endpoints: readonly ServiceEndpoint[]): Promise<ProbeService | undefined> {
    const next = this.busy.then(() => this.apply(port, endpoints));
    this.busy = next.catch(() => undefined);
    return next;
  }

  private async apply(port: number, endpoints: readonly ServiceEndpoint[]): Promise<ProbeService | undefined> {
    const key = endpoints.length ? JSON.stringify([port, endpoints]) : '[]';
    if (!this.frontend || key === this.current.key) return this.current.service;
    try {
      if (this.current.service) await this.frontend.remove(PROBE_SERVICE_NAME);
      this.current = { key: '[]', service: undefined };
      if (endpoints.length) {
        const addr = await this.frontend.expose(PROBE_SERVICE_NAME, port, [...endpoints]);
        this.current = { key, service: { name: PROBE_SERVICE_NAME, ip: addr.ip, port: addr.port } };
        this.log.info('probe service exposed', { ip: addr.ip, port: addr.port, endpoints: endpoints.length });
      }
    } catch (err) {
      this.log.warn('cannot update the probe service; retrying at the next plan', { error: (err as Error).message });
    }
    return this.current.service;
  }

  /** Removes the Service (collector shutdown). Never throws. */
  async close(): Promise<void> {
    await this.busy;
    if (this.current.service) await this.frontend?.remove(PROBE_SERVICE_NAME).catch(() => undefined);
    this.current = { key: '[]', service: undefined };
  }
}
