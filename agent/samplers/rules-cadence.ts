/**
 * When a periodic dataplane sample reads rules and maps again. Reading them
 * means starting tools (iptables-save, nft, bpftool, each through nsenter),
 * which costs about 100 millicores at 1 Hz on an empty node and more than a
 * core at 30,000 Services, so a sampler that read them every second would
 * become the load it measures. Conntrack fill and process CPU are read from
 * /proc on every sample; rules are read again only once `minIntervalMs` has
 * passed and the last read's wall time is at most 1/`costFactor` of the time
 * since it (so rule reads take at most about 1% of one core by default).
 * One-shot samples (phase boundaries, sync checks) always read everything.
 * Pure.
 */

export interface RulesCadence {
  /** Shortest time between two rule reads of periodic samples. */
  minIntervalMs: number;
  /** The time between reads is at least this many times the last read's wall time. */
  costFactor: number;
}

export const DEFAULT_RULES_CADENCE: Readonly<RulesCadence> = Object.freeze({ minIntervalMs: 30_000, costFactor: 100 });

export interface LastRulesRead {
  atMs: number;
  wallMs: number;
}

/** True when a periodic sample at `nowMs` should read rules and maps again. */
export function rulesReadDue(
  last: LastRulesRead | undefined,
  nowMs: number,
  cadence: RulesCadence = DEFAULT_RULES_CADENCE,
): boolean {
  if (!last) return true;
  return nowMs - last.atMs >= Math.max(cadence.minIntervalMs, last.wallMs * cadence.costFactor);
}

/**
 * Monitoring mode's: its round interval (30 s by default) already spaces the
 * reads, so a round reads rules whenever the last read took at most 1/30 of the
 * time since (3% of a core at most, however large the ruleset).
 */
export const MONITOR_RULES_CADENCE: Readonly<RulesCadence> = Object.freeze({ minIntervalMs: 0, costFactor: 30 });
