/**
 * Preflight of a Service scale sweep on Cilium: every Service takes one LB map
 * entry for its frontend plus one per backend, and an overflowing map shows up
 * as a false RPS collapse, never as an error. Compares what the sweep needs with
 * `bpf-lb-map-max` from the cilium-config ConfigMap (65536 when unset) and says
 * the exact fix when it does not fit. Pure; the caller reads the ConfigMap.
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

/** Cilium's default for bpf-lb-map-max. */
export const CILIUM_DEFAULT_LB_MAP_MAX = 65_536;

export interface LbMapPreflight {
  needed: number;
  max: number;
  fits: boolean;
  /** What to change when it does not fit (empty when it does). */
  fix: string;
}

/**
 * `services`: the largest step plus the run's own Services; `existing`: LB
 * entries already in use (from the agents' samples), 0 when unknown.
 */
export function lbMapPreflight(
  services: number,
  endpointsPerService: number,
  ciliumConfig: Readonly<Record<string, string>>,
  existing = 0,
): LbMapPreflight {
  const raw = ciliumConfig['bpf-lb-map-max'];
  let max = CILIUM_DEFAULT_LB_MAP_MAX;
  if (raw !== undefined && raw !== '') {
    max = Number(raw);
    if (!Number.isInteger(max) || max <= 0) {
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        `cilium-config bpf-lb-map-max: '${raw}' is not a positive integer`,
        { details: { field: 'bpf-lb-map-max' } },
      );
    }
  }
  const needed = services * (endpointsPerService + 1) + existing;
  if (needed <= max) return { needed, max, fits: true, fix: '' };
  // Cilium sizes maps by powers of two in practice; suggest the next one that fits.
  let suggest = max;
  while (suggest < needed) suggest *= 2;
  return {
    needed,
    max,
    fits: false,
    fix: `kubectl -n kube-system patch configmap cilium-config --type merge -p '{"data":{"bpf-lb-map-max":"${suggest}"}}' && kubectl -n kube-system rollout restart daemonset/cilium`,
  };
}
