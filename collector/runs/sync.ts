/**
 * Decides from an agent's dataplane sample whether its node has caught up with
 * a scale step: KUBE-SERVICES at least as long as expected (iptables mode) or
 * kube-proxy's service-ips map at least as full (nftables mode). Pure; a sample
 * whose relevant read failed never counts as caught up.
 */
import type { DataplaneSample } from '../../gen/cnibench/v1/agent.js';
import type { SyncTarget } from '../../core/service-frontend.js';

export interface SyncCheck {
  ok: boolean;
  kubeServicesRules: number;
  nftServiceIps: number | null;
  /** Why not, when not ok. */
  why: string;
}

export function checkSync(sample: DataplaneSample | undefined, target: SyncTarget): SyncCheck {
  if (!sample) return { ok: false, kubeServicesRules: 0, nftServiceIps: null, why: 'no sample arrived' };
  const base = { kubeServicesRules: sample.kubeServicesRules, nftServiceIps: sample.nftServiceIps ?? null };
  const failed = (prefix: string) => sample.errors.find((e) => e.startsWith(prefix));
  if (target.kubeServicesRules !== undefined) {
    const err = failed('iptables');
    if (err) return { ...base, ok: false, why: err };
    if (sample.kubeServicesRules < target.kubeServicesRules) return { ...base, ok: false, why: `KUBE-SERVICES has ${sample.kubeServicesRules} of ${target.kubeServicesRules} rules` };
  }
  if (target.nftServiceIps !== undefined) {
    const err = failed('nft');
    if (err) return { ...base, ok: false, why: err };
    const have = sample.nftServiceIps ?? 0;
    if (have < target.nftServiceIps) return { ...base, ok: false, why: `service-ips has ${sample.nftServiceIps === undefined ? 'no map' : have} of ${target.nftServiceIps} elements` };
  }
  return { ...base, ok: true, why: '' };
}

/**
 * A node's target `added` Services above its baseline, in the mode the node
 * shows: nftables when it has kube-proxy's service-ips map, else iptables.
 */
export function aboveBaseline(base: SyncTarget | undefined, added: number): SyncTarget {
  if (base?.nftServiceIps !== undefined) return { nftServiceIps: base.nftServiceIps + added };
  return { kubeServicesRules: (base?.kubeServicesRules ?? 0) + added };
}
