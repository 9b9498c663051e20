/**
 * Waits until the dataplane shows a policy state, by probing: `enforced` when
 * the denied client is blocked and every allowed one connects, `open` when the
 * denied client connects again. A fast probe (short timeout) finds the moment;
 * a slow one confirms that a block is a block and not a slow machine. Returns
 * when it was first observed, or throws the last observation as the reason.
 * How a probe is made is the caller's: the lab probes from inside its pod
 * namespaces (lab/policy/probe.ts), a cluster collector through its agents
 * (collector/runs/condition-probes.ts); the loop and its verdict are shared.
 */
import { CniBenchError, ErrorCodes } from './errors.js';

export type ProbeOutcome = 'connected' | 'timeout' | 'refused' | 'unreachable';

/** One end that probes: for the lab a pod namespace, for a cluster an agent. */
export interface ProbeEnd {
  /** Where the probe runs: the lab's pod namespace, or the agent's id. */
  ns: string;
  name: string;
}

/** Opens one TCP connection from `from` to ip:port within timeoutMs and says how it went. */
export type Prober = (from: ProbeEnd, ip: string, port: number, timeoutMs: number) => Promise<ProbeOutcome>;

export interface PolicyState {
  /** ms from `since` until the state was first observed (and then confirmed). */
  ms: number;
  denied: ProbeOutcome;
  allowed: ProbeOutcome;
  polls: number;
}

export interface PolicyProbeTimes {
  /** Timeout of the probe that finds the moment the denied client is blocked. */
  fastMs: number;
  /** Timeout of the probes that confirm (allowed clients connect, the denied one stays blocked). */
  confirmMs: number;
  /** Pause between polls. */
  pauseMs: number;
}

export const LAB_PROBE_TIMES: PolicyProbeTimes = Object.freeze({ fastMs: 300, confirmMs: 3000, pauseMs: 50 });

export async function waitForPolicyWith(
  prober: Prober,
  want: 'enforced' | 'open',
  ends: { denied: ProbeEnd; allowed: readonly ProbeEnd[]; serverIp: string; port: number },
  since: number,
  deadlineMs: number,
  signal?: AbortSignal,
  times: PolicyProbeTimes = LAB_PROBE_TIMES,
): Promise<PolicyState> {
  let polls = 0;
  let denied: ProbeOutcome = 'timeout';
  let allowed: ProbeOutcome = 'timeout';
  let blockedClient = ends.allowed.map((a) => a.name).join(', ');
  const { serverIp, port } = ends;
  while (Date.now() - since < deadlineMs) {
    if (signal?.aborted) throw new CniBenchError(ErrorCodes.CANCELLED, 'cancelled while verifying a policy');
    polls++;
    if (want === 'open') {
      denied = await prober(ends.denied, serverIp, port, times.confirmMs);
      if (denied === 'connected') return { ms: Date.now() - since, denied, allowed, polls };
    } else {
      denied = await prober(ends.denied, serverIp, port, times.fastMs);
      const seen = Date.now();
      if (denied !== 'connected') {
        allowed = 'connected';
        for (const a of ends.allowed) {
          const got = await prober(a, serverIp, port, times.confirmMs);
          if (got !== 'connected') [allowed, blockedClient] = [got, a.name];
        }
        if (allowed === 'connected') {
          denied = await prober(ends.denied, serverIp, port, times.confirmMs);
          if (denied !== 'connected') return { ms: seen - since, denied, allowed, polls };
        }
      }
    }
    await new Promise((r) => setTimeout(r, times.pauseMs));
  }
  const what =
    want === 'open'
      ? `the denied client ${ends.denied.name} still cannot connect (${denied})`
      : denied === 'connected'
        ? `the denied client ${ends.denied.name} still connects`
        : `the allowed client ${blockedClient} cannot connect (${allowed})`;
  throw new CniBenchError(
    ErrorCodes.TIMEOUT,
    `policy not ${want} ${Math.round(deadlineMs / 1000)} s after the change: ${what} (${polls} probes to ${serverIp}:${port})`,
  );
}
