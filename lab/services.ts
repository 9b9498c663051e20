/**
 * The lab's ServiceFrontend: allocates a ClusterIP from 198.19.0.0/16 and
 * programs the Service in kube-proxy's iptables layout in every node namespace,
 * as kube-proxy does on every node of a cluster.
 */
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { run } from '../core/process.js';
import type { ServiceAddress, ServiceEndpoint, ServiceFrontend } from '../collector/runs/service-frontend.js';
import { renderBase, renderServicesAdd, renderServicesDelete, type LabService } from './kube-proxy-iptables.js';
import { CLUSTER_CIDR, type LabPlan } from './plan.js';

export class LabIptablesServices implements ServiceFrontend {
  readonly description = 'lab kube-proxy iptables';
  private readonly services = new Map<string, LabService>();
  /**
   * A name keeps its ClusterIP for the lab's lifetime. A Service re-created at a
   * new IP right after the old one went away makes new connections clash with the
   * old ones' conntrack entries (same endpoint tuple, still in TIME_WAIT), which
   * showed up as short-connection runs at a third of their rate.
   */
  private readonly ips = new Map<string, string>();
  private nextIp = 10;

  constructor(private readonly plan: LabPlan) {}

  private async restore(text: string): Promise<void> {
    for (const node of this.plan.nodes) {
      await run('ip', ['netns', 'exec', node.ns, 'iptables-restore', '--noflush'], { input: text, tool: 'iptables-restore', timeoutMs: 120_000 });
    }
  }

  /** Creates kube-proxy's base chains and hooks in every node. */
  async init(): Promise<void> {
    await this.restore(renderBase());
  }

  private allocate(name: string): string {
    const known = this.ips.get(name);
    if (known) return known;
    const n = this.nextIp++;
    if (n > 65_000) throw new CniBenchError(ErrorCodes.LAB, 'lab service range 198.19.0.0/16 exhausted');
    const ip = `198.19.${Math.floor(n / 256)}.${n % 256}`;
    this.ips.set(name, ip);
    return ip;
  }

  async expose(name: string, port: number, endpoints: ServiceEndpoint[]): Promise<ServiceAddress> {
    if (this.services.has(name)) throw new CniBenchError(ErrorCodes.CONFLICT, `lab service '${name}' exists`);
    const svc: LabService = { namespace: 'cni-bench', name, portName: 'p', clusterIp: this.allocate(name), port, protocol: 'tcp', endpoints };
    await this.restore(renderServicesAdd([svc], CLUSTER_CIDR));
    this.services.set(name, svc);
    return { ip: svc.clusterIp, port };
  }

  async remove(name: string): Promise<void> {
    const svc = this.services.get(name);
    if (!svc) return;
    this.services.delete(name);
    await this.restore(renderServicesDelete([svc]));
  }
}
