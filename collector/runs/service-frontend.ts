/**
 * How a run puts a Service in front of its servers. The lab programs kube-proxy
 * rules in its node namespaces; in a cluster the collector creates a Service.
 * The orchestrator only sees this interface.
 */
export interface ServiceEndpoint {
  ip: string;
  port: number;
}

export interface ServiceAddress {
  ip: string;
  port: number;
}

export interface ServiceFrontend {
  /** Short description for reports, e.g. "lab kube-proxy iptables". */
  readonly description: string;
  expose(name: string, port: number, endpoints: ServiceEndpoint[]): Promise<ServiceAddress>;
  remove(name: string): Promise<void>;
}
