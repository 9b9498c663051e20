/**
 * Waits until the dataplane shows a policy state, by probing (probe.ts):
 * `enforced` when the denied client is blocked and the allowed one connects,
 * `open` when the denied client connects again. A fast probe (short timeout)
 * finds the moment; a slow one confirms that a block is a block and not a
 * slow machine. Returns when it was first observed, or throws the last
 * observation as the reason.
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { type ProbeOutcome, probe } from './probe.js';

export interface ProbeEnd {
  ns: string;
  name: string;
}

export interface PolicyState {
  /** ms from `since` until the state was first observed (and then confirmed). */
  ms: number;
  denied: ProbeOutcome;
  allowed: ProbeOutcome;
  polls: number;
}

const FAST_MS = 300;
const CONFIRM_MS = 3000;

export async function waitForPolicy(
  want: 'enforced' | 'open',
  ends: { denied: ProbeEnd; allowed: readonly ProbeEnd[]; serverIp: string; port: number },
  since: number,
  deadlineMs: number,
  signal?: AbortSignal,
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
      denied = await probe(ends.denied.ns, serverIp, port, CONFIRM_MS);
      if (denied === 'connected') return { ms: Date.now() - since, denied, allowed, polls };
    } else {
      denied = await probe(ends.denied.ns, serverIp, port, FAST_MS);
      const seen = Date.now();
      if (denied !== 'connected') {
        allowed = 'connected';
        for (const a of ends.allowed) {
          const got = await probe(a.ns, serverIp, port, CONFIRM_MS);
          if (got !== 'connected') [allowed, blockedClient] = [got, a.name];
        }
        if (allowed === 'connected') {
          denied = await probe(ends.denied.ns, serverIp, port, CONFIRM_MS);
          if (denied !== 'connected') return { ms: seen - since, denied, allowed, polls };
        }
      }
    }
    await new Promise((r) => setTimeout(r, 50));
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
