/**
 * Waits until the lab's dataplane shows a policy state, probing from inside
 * the lab's pod namespaces (probe.ts). The loop and its verdict are shared
 * with the cluster path (core/policy-verify.ts).
 */
import { type PolicyState, type ProbeEnd, waitForPolicyWith } from '../../core/policy-verify.js';
import { probe } from './probe.js';

export type { PolicyState, ProbeEnd };

export function waitForPolicy(
  want: 'enforced' | 'open',
  ends: { denied: ProbeEnd; allowed: readonly ProbeEnd[]; serverIp: string; port: number },
  since: number,
  deadlineMs: number,
  signal?: AbortSignal,
): Promise<PolicyState> {
  return waitForPolicyWith(
    (from, ip, port, timeoutMs) => probe(from.ns, ip, port, timeoutMs),
    want,
    ends,
    since,
    deadlineMs,
    signal,
  );
}
