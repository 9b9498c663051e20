/**
 * Putting a run's NetworkPolicies in place and timing their enforcement, the
 * same for the lab (lab/policy/conditions.ts) and a cluster's collector
 * (collector/kubernetes/conditions.ts): the filler policies 8 at a time, the
 * one that lets the clients through last on its own, then the wait until the
 * dataplane enforces them (core/policy-verify.ts), timed from the first
 * create. How a policy is created and how enforcement is probed are the
 * caller's.
 */
import { CniBenchError, ErrorCodes } from './errors.js';
import type { PolicyState } from './policy-verify.js';

/** Parallel creates of the filler policies. */
const CREATE_WORKERS = 8;

/** Creates `policies` with `createOne`: all but the last in parallel, then the last (the allow policy) alone. */
export async function createAllowLast<T>(
  policies: readonly T[],
  createOne: (policy: T) => Promise<unknown>,
  signal: AbortSignal,
): Promise<void> {
  const queue = [...policies];
  const last = queue.pop() as T;
  const worker = async (): Promise<void> => {
    for (let p = queue.shift(); p; p = queue.shift()) {
      if (signal.aborted) throw new CniBenchError(ErrorCodes.CANCELLED, 'cancelled while creating policies');
      await createOne(p);
    }
  };
  await Promise.all(Array.from({ length: CREATE_WORKERS }, worker));
  await createOne(last);
}

export interface PoliciesEnforced {
  /** The enforced state as first observed, `ms` from the first create. */
  on: PolicyState;
  /** How long the API took to create them all. */
  apiMs: number;
  /** How long after the last create enforcement was observed. */
  afterLastCreateMs: number;
}

/** Creates `policies` (createAllowLast) and waits until `enforced(since)` observes them in force. */
export async function applyPolicies<T>(
  policies: readonly T[],
  createOne: (policy: T) => Promise<unknown>,
  enforced: (since: number) => Promise<PolicyState>,
  signal: AbortSignal,
): Promise<PoliciesEnforced> {
  const began = Date.now();
  await createAllowLast(policies, createOne, signal);
  const apiMs = Date.now() - began;
  const on = await enforced(began);
  return { on, apiMs, afterLastCreateMs: Math.max(0, on.ms - apiMs) };
}

/** A step's evidence once `n` policies are in force: enforcement time, the API's share, and what the probes saw. */
export function enforcedEvidence(n: number, r: PoliciesEnforced, denied: string, allowed: string) {
  return {
    enforcementMs: r.on.ms,
    apiMs: r.apiMs,
    facts: { policies: n, afterLastCreateMs: r.afterLastCreateMs, denied, allowed, polls: r.on.polls },
  };
}
