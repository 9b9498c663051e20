/**
 * Picks the lab's kube-proxy: emulated in iptables mode (legacy or nft
 * backend) or nftables mode, both programming kube-proxy's own layout in every
 * node namespace and implementing the run's ServiceFrontend and the sweep's
 * scaler; the real kube-proxy in either mode (proxy-kube-proxy.ts); Cilium
 * (cilium/); or 'external', where a real kube-proxy outside the lab programs the
 * nodes and the lab writes nothing (see proxy-external.ts).
 */

import { createLogger, type Logger } from '../core/log.js';
import type { ServiceFrontend, ServiceScaler } from '../core/service-frontend.js';
import { CILIUM_DATAPLANES, type CiliumDataplane } from './cilium/config.js';
import { CiliumLab, type CiliumLabOptions } from './cilium/dataplane.js';
import type { LabPlan } from './plan.js';
import { LabExternalProxy } from './proxy-external.js';
import { type IptablesBackend, LabIptablesProxy } from './proxy-iptables.js';
import { isKubeProxyMode, KUBE_PROXY_DATAPLANES, type KubeProxyDataplane, KubeProxyLab } from './proxy-kube-proxy.js';
import { LabNftablesProxy } from './proxy-nftables.js';

/** The modes the lab emulates (what `--proxy-mode` and a sweep's `--modes` accept). */
export const PROXY_MODES = ['iptables', 'nftables'] as const;
export type ProxyMode = (typeof PROXY_MODES)[number];
export type LabProxyMode = ProxyMode | 'external' | CiliumDataplane | KubeProxyDataplane;

/**
 * Every dataplane a lab can be built with (what `--dataplane` accepts): the
 * emulated kube-proxy modes, the real kube-proxy's, and Cilium's.
 */
export const LAB_DATAPLANES = [...PROXY_MODES, ...KUBE_PROXY_DATAPLANES, ...CILIUM_DATAPLANES] as const;
export type LabDataplane = (typeof LAB_DATAPLANES)[number];

/** Proxy options of a lab dataplane (the iptables backend applies to iptables mode only). */
export function dataplaneProxy(
  dataplane: LabDataplane,
  o: { iptablesBackend?: IptablesBackend; lbMapMax?: number } = {},
): LabProxyOptions {
  if (isCiliumMode(dataplane))
    return { mode: dataplane, ...(o.lbMapMax !== undefined ? { lbMapMax: o.lbMapMax } : {}) };
  if (isKubeProxyMode(dataplane)) return { mode: dataplane };
  return { mode: dataplane, ...(dataplane === 'iptables' ? { iptablesBackend: o.iptablesBackend ?? 'legacy' } : {}) };
}

export type LabProxyOptions =
  | {
      mode: ProxyMode;
      /** iptables mode only. */
      iptablesBackend?: IptablesBackend;
    }
  | { mode: 'external' }
  /** The real kube-proxy per node against the lab's own control plane (proxy-kube-proxy.ts). */
  | { mode: KubeProxyDataplane }
  /**
   * No kube-proxy: real Cilium with kube-proxy replacement (lab/cilium/).
   * `lbMapMax`: cilium-config's bpf-lb-map-max from the start (a sweep sizes
   * its fresh lab's LB maps for its largest step; default Cilium's 65536);
   * the other options: CiliumLabOptions.
   */
  | ({ mode: CiliumDataplane } & CiliumLabOptions);

export interface LabProxy extends ServiceFrontend, ServiceScaler {
  readonly mode: LabProxyMode;
  /** `signal` aborts a long start (the Cilium lab's). */
  init(signal?: AbortSignal): Promise<void>;
  /** Stops what init started outside the lab's namespaces (before they are deleted). */
  destroy?(): Promise<void>;
  /** After the namespaces are deleted. */
  removeCgroups?(): Promise<void>;
}

export function isCiliumMode(mode: string): mode is CiliumDataplane {
  return mode === 'cilium' || mode === 'cilium-vxlan';
}

export function createLabProxy(
  plan: LabPlan,
  opts: LabProxyOptions,
  log: Logger = createLogger({ component: 'lab' }),
): LabProxy {
  if (opts.mode === 'external') return new LabExternalProxy();
  if (isCiliumMode(opts.mode)) return new CiliumLab(opts.mode, plan, log, opts as CiliumLabOptions);
  if (isKubeProxyMode(opts.mode)) return new KubeProxyLab(opts.mode, plan, log);
  const o = opts as { mode: ProxyMode; iptablesBackend?: IptablesBackend };
  return o.mode === 'nftables' ? new LabNftablesProxy(plan) : new LabIptablesProxy(plan, o.iptablesBackend ?? 'legacy');
}
