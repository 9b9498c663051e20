/**
 * How a sweep sizes the fresh Cilium lab it runs in: every Service takes one
 * LB map entry for its frontend, one per backend and one wildcard entry for its
 * address (as the real v1.20.2 maps show; the collector's preflight,
 * collector/runs/cilium-preflight.ts, counts the same), and an overflowing map
 * shows up as a false RPS collapse, never as an error. A lab is built for one
 * sweep, so it starts Cilium with `bpf-lb-map-max` large enough for the
 * largest step instead of raising it (and restarting the agents) half-way.
 * The collector's preflight still checks the running config before the first
 * step. Pure.
 */

/** Cilium's default bpf-lb-map-max. */
export const CILIUM_LB_MAP_DEFAULT = 65_536;
/** LB entries beyond the dummies: the apiserver's Service and the run's fronting Services with their ports and backends. */
export const LB_MAP_HEADROOM = 256;

/**
 * bpf-lb-map-max for a sweep up to `maxServices` dummy Services of
 * `endpointsPerService` endpoints: undefined when Cilium's default holds them,
 * else the next power of two that does (how Cilium sizes maps in practice).
 */
export function lbMapMaxFor(maxServices: number, endpointsPerService: number): number | undefined {
  const needed = maxServices * (endpointsPerService + 2) + LB_MAP_HEADROOM;
  if (needed <= CILIUM_LB_MAP_DEFAULT) return undefined;
  let size = CILIUM_LB_MAP_DEFAULT;
  while (size < needed) size *= 2;
  return size;
}
