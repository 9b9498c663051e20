/**
 * Picks the lab's kube-proxy: emulated in iptables mode (legacy or nft
 * backend) or nftables mode, both programming kube-proxy's own layout in every
 * node namespace and implementing the run's ServiceFrontend and the sweep's
 * scaler; or 'external', where a real kube-proxy outside the lab programs the
 * nodes and the lab writes nothing (see proxy-external.ts).
 */
import type { ServiceFrontend, ServiceScaler } from '../core/service-frontend.js';
import type { LabPlan } from './plan.js';
import { LabExternalProxy } from './proxy-external.js';
import { LabIptablesProxy, type IptablesBackend } from './proxy-iptables.js';
import { LabNftablesProxy } from './proxy-nftables.js';

/** The modes the lab emulates (what `--proxy-mode` and a sweep's `--modes` accept). */
export const PROXY_MODES = ['iptables', 'nftables'] as const;
export type ProxyMode = (typeof PROXY_MODES)[number];
export type LabProxyMode = ProxyMode | 'external';

export type LabProxyOptions =
  | {
      mode: ProxyMode;
      /** iptables mode only. */
      iptablesBackend?: IptablesBackend;
    }
  | { mode: 'external' };

export interface LabProxy extends ServiceFrontend, ServiceScaler {
  readonly mode: LabProxyMode;
  init(): Promise<void>;
}

export function createLabProxy(plan: LabPlan, opts: LabProxyOptions): LabProxy {
  if (opts.mode === 'external') return new LabExternalProxy();
  return opts.mode === 'nftables' ? new LabNftablesProxy(plan) : new LabIptablesProxy(plan, opts.iptablesBackend ?? 'legacy');
}
