/**
 * Picks the lab's kube-proxy emulation: iptables mode (legacy or nft backend)
 * or nftables mode. Both program kube-proxy's own layout in every node
 * namespace and implement the run's ServiceFrontend and the sweep's scaler.
 */
import type { ServiceFrontend, ServiceScaler } from '../collector/runs/service-frontend.js';
import type { LabPlan } from './plan.js';
import { LabIptablesProxy, type IptablesBackend } from './proxy-iptables.js';
import { LabNftablesProxy } from './proxy-nftables.js';

export const PROXY_MODES = ['iptables', 'nftables'] as const;
export type ProxyMode = (typeof PROXY_MODES)[number];

export interface LabProxyOptions {
  mode: ProxyMode;
  /** iptables mode only. */
  iptablesBackend?: IptablesBackend;
}

export interface LabProxy extends ServiceFrontend, ServiceScaler {
  readonly mode: ProxyMode;
  init(): Promise<void>;
}

export function createLabProxy(plan: LabPlan, opts: LabProxyOptions): LabProxy {
  return opts.mode === 'nftables' ? new LabNftablesProxy(plan) : new LabIptablesProxy(plan, opts.iptablesBackend ?? 'legacy');
}
