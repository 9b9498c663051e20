/**
 * Decides from an agent's dataplane sample whether its node has caught up with
 * a scale step or a new Service: KUBE-SERVICES at least as long as expected
 * (iptables mode), kube-proxy's service-ips map at least as full (nftables
 * mode), or Cilium's LB maps holding enough frontends with all their backends
 * (and the Service's own frontend with its backends, where its address is
 * known). Pure; a sample whose relevant read failed never counts as caught up.
 */

import type { SyncTarget } from '../../core/service-frontend.js';
import type { DataplaneSample } from '../../gen/cnibench/v1/agent.js';

export interface SyncCheck {
  ok: boolean;
  kubeServicesRules: number;
  nftServiceIps: number | null;
  ciliumFrontends: number | null;
  /** Why not, when not ok. */
  why: string;
}

type Verdict = string | undefined;

function checkKubeProxy(sample: DataplaneSample, target: SyncTarget, failed: (p: string) => Verdict): Verdict {
  if (target.kubeServicesRules !== undefined) {
    const err = failed('iptables');
    if (err) return err;
    if (sample.kubeServicesRules < target.kubeServicesRules)
      return `KUBE-SERVICES has ${sample.kubeServicesRules} of ${target.kubeServicesRules} rules`;
  }
  if (target.nftServiceIps !== undefined) {
    const err = failed('nft');
    if (err) return err;
    const have = sample.nftServiceIps ?? 0;
    if (have < target.nftServiceIps)
      return `service-ips has ${sample.nftServiceIps === undefined ? 'no map' : have} of ${target.nftServiceIps} elements`;
  }
  return undefined;
}

function checkCilium(sample: DataplaneSample, target: SyncTarget, failed: (p: string) => Verdict): Verdict {
  if (target.ciliumFrontends === undefined && !target.ciliumFrontend) return undefined;
  const err = failed('cilium:');
  if (err) return err;
  const lb = sample.cilium;
  if (!lb) return 'no Cilium LB maps on the node';
  const want = target.ciliumFrontend;
  if (want) {
    const f = lb.frontendList.find((x) => x.address === want.address && x.port === want.port && !x.internalScope);
    const missing = f ? want.backends.filter((b) => !f.backends.includes(b)) : want.backends;
    if (f && missing.length === 0) return undefined;
    // A truncated list may leave the frontend out: then only the count below decides.
    if (!lb.frontendsTruncated || target.ciliumFrontends === undefined) {
      return f
        ? `Cilium LB frontend ${want.address}:${want.port} lacks backend ${missing.join(', ')} (has ${f.backends.join(', ') || 'none'})`
        : `Cilium LB has no frontend ${want.address}:${want.port}`;
    }
  }
  if (target.ciliumFrontends !== undefined && lb.programmedFrontends < target.ciliumFrontends) {
    return `Cilium LB has ${lb.programmedFrontends} of ${target.ciliumFrontends} frontends with all their backends`;
  }
  return undefined;
}

export function checkSync(sample: DataplaneSample | undefined, target: SyncTarget): SyncCheck {
  if (!sample)
    return { ok: false, kubeServicesRules: 0, nftServiceIps: null, ciliumFrontends: null, why: 'no sample arrived' };
  const base = {
    kubeServicesRules: sample.kubeServicesRules,
    nftServiceIps: sample.nftServiceIps ?? null,
    ciliumFrontends: sample.cilium?.programmedFrontends ?? null,
  };
  const failed = (prefix: string): Verdict => sample.errors.find((e) => e.startsWith(prefix));
  const why = checkKubeProxy(sample, target, failed) ?? checkCilium(sample, target, failed);
  return why === undefined ? { ...base, ok: true, why: '' } : { ...base, ok: false, why };
}

/** What a node's sample shows before Services are added: the counts of every service proxy it has. */
export function baselineOf(sample: DataplaneSample): SyncTarget {
  return {
    kubeServicesRules: sample.kubeServicesRules,
    ...(sample.nftServiceIps !== undefined ? { nftServiceIps: sample.nftServiceIps } : {}),
    ...(sample.cilium ? { ciliumFrontends: sample.cilium.programmedFrontends } : {}),
  };
}

/**
 * A node's target `added` Services above its baseline, in the mode the node
 * shows: Cilium's LB frontends where it has Cilium's maps (and KUBE-SERVICES
 * too if kube-proxy also runs there), nftables when it has kube-proxy's
 * service-ips map, else iptables.
 */
export function aboveBaseline(base: SyncTarget | undefined, added: number): SyncTarget {
  if (base?.ciliumFrontends !== undefined) {
    return {
      ciliumFrontends: base.ciliumFrontends + added,
      ...((base.kubeServicesRules ?? 0) > 0 ? { kubeServicesRules: (base.kubeServicesRules ?? 0) + added } : {}),
    };
  }
  if (base?.nftServiceIps !== undefined) return { nftServiceIps: base.nftServiceIps + added };
  return { kubeServicesRules: (base?.kubeServicesRules ?? 0) + added };
}

/** What the client's node must show once one new Service (at `svc`, with `backends`) is programmed, from its sample just before. */
export function serviceSyncTarget(
  before: DataplaneSample,
  svc: { ip: string; port: number },
  backends: string[],
): SyncTarget {
  const target = aboveBaseline(baselineOf(before), 1);
  if (target.ciliumFrontends === undefined) return target;
  // The frontend itself decides; the count stands in only when the sample's frontend list was cut short.
  return { ...target, ciliumFrontend: { address: svc.ip, port: svc.port, backends } };
}

/** One round of sync samples: when the collector asked every node, when the last answer arrived, and whether all were caught up. */
export interface SyncPoll {
  sentMs: number;
  receivedMs: number;
  ok: boolean;
}

export interface ProgrammingLatency {
  /** From the first Service's creation until the round of samples that showed every node caught up had arrived: an upper bound. */
  latencyMs: number;
  /**
   * How far below latencyMs the true moment may lie: the catching-up happened
   * after the previous round (that still saw a node behind) was asked for, or
   * after the last object was written when the first round already saw it.
   */
  resolutionMs: number;
}

/**
 * Programming latency of a sweep step measured by polling the dataplane, never
 * by a sleep: `beganMs` when the first object was written, `writtenMs` when
 * the last write returned, `polls` in order (the last one ok). Pure.
 */
export function programmingLatency(beganMs: number, writtenMs: number, polls: readonly SyncPoll[]): ProgrammingLatency {
  const okAt = polls.findIndex((p) => p.ok);
  if (okAt < 0) throw new RangeError('programmingLatency: no poll saw every node caught up');
  const ok = polls[okAt] as SyncPoll;
  const before = okAt > 0 ? (polls[okAt - 1] as SyncPoll).sentMs : writtenMs;
  return { latencyMs: ok.receivedMs - beganMs, resolutionMs: ok.receivedMs - Math.max(before, beganMs) };
}
