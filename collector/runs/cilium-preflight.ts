/**
 * Preflight of a Service scale sweep on Cilium. Every ClusterIP Service with
 * one port takes, in cilium_lb4_services_v2, one entry for its frontend, one
 * per backend slot and one wildcard entry for its address (protocol ANY, port
 * 0: seen in the real v1.20.2 maps, test/fixtures/cilium/README.md), and each
 * distinct backend one entry in cilium_lb4_backends_v3; an overflowing map
 * shows up as a false RPS collapse, never as an error.
 *
 * What is in use and what the kernel holds come from the agents' samples, never
 * from defaults: each node's entries now and its loaded maps' max_entries
 * (CiliumState). cilium-config's bpf-lb-map-max is only what a restart would
 * load. Without the operator's opt-in a sweep that does not fit is refused with
 * the exact command to run; with it, `ensureLbMapFits` sets the new size,
 * restarts Cilium (the caller's `restart`: a DaemonSet rollout in a cluster,
 * an agent restart in the lab), waits until every node's loaded map reads the
 * new size and holds again every frontend the node held before (a restarted
 * agent starts from empty maps and fills them after it reports ready), and its
 * `revert` puts the old value back the same way, verified again (the size
 * only: the sweep's dummies are being deleted meanwhile, so the count before
 * is no target).
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { DataplaneSample } from '../../gen/cnibench/v1/agent.js';

/** Cilium's default for bpf-lb-map-max. */
export const CILIUM_DEFAULT_LB_MAP_MAX = 65_536;
export const LB_MAP_MAX_KEY = 'bpf-lb-map-max';

/** Services-map entries one single-port ClusterIP Service with `endpoints` backends takes. */
export function serviceEntriesPer(endpoints: number): number {
  return endpoints + 2;
}

/** One node's Cilium LB maps as its agent sampled them. */
export interface NodeLbMaps {
  node: string;
  serviceEntries: number;
  backendEntries: number;
  /** max_entries of the loaded maps (0: the sample did not find the map). */
  servicesMax: number;
  backendsMax: number;
  /** Frontends whose every backend is in the backends map (what connections can use). */
  frontends: number;
}

/** Pure: a node's LB maps from its sample; undefined when the sample shows no Cilium. */
export function nodeLbMaps(node: string, sample: DataplaneSample | undefined): NodeLbMaps | undefined {
  const c = sample?.cilium;
  if (!c) return undefined;
  return {
    node,
    serviceEntries: c.serviceEntries,
    backendEntries: c.backendEntries,
    servicesMax: c.lbServicesMaxEntries,
    backendsMax: c.lbBackendsMaxEntries,
    frontends: c.programmedFrontends,
  };
}

export interface LbMapPreflight {
  /** Services-map entries the largest step needs on the fullest node (what it holds now plus the sweep's). */
  needed: number;
  neededBackends: number;
  /** The smallest loaded services map over the nodes (cilium-config's value when no node was sampled). */
  max: number;
  backendsMax: number;
  /** bpf-lb-map-max in cilium-config (Cilium's default when unset). */
  configured: number;
  fits: boolean;
  /** The size to set when it does not fit (a power of two, as Cilium's defaults are), else 0. */
  suggest: number;
  /** The exact command to run when it does not fit (empty when it does). */
  fix: string;
  /** Per node, what its agent sampled. */
  nodes: NodeLbMaps[];
  /** Where max came from, e.g. "loaded maps on lab-n0, lab-n1" or "cilium-config (no node sampled)". */
  source: string;
}

export interface PreflightWhere {
  /** Namespace of cilium-config and the cilium DaemonSet (kube-system). */
  namespace?: string;
}

/** Pure: cilium-config's bpf-lb-map-max (Cilium's default when unset); a malformed value names the key. */
export function configuredLbMapMax(config: Readonly<Record<string, string>>): number {
  const raw = config[LB_MAP_MAX_KEY];
  if (raw === undefined || raw === '') return CILIUM_DEFAULT_LB_MAP_MAX;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0)
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `cilium-config ${LB_MAP_MAX_KEY}: '${raw}' is not a positive integer`,
      {
        details: { field: LB_MAP_MAX_KEY },
      },
    );
  return n;
}

/** Pure: the exact commands that set bpf-lb-map-max to `value` and restart Cilium's agents. */
export function lbMapFixCommand(value: number, where: PreflightWhere = {}): string {
  const ns = where.namespace ?? 'kube-system';
  return `kubectl -n ${ns} patch configmap cilium-config --type merge -p '{"data":{"${LB_MAP_MAX_KEY}":"${value}"}}' && kubectl -n ${ns} rollout restart daemonset/cilium && kubectl -n ${ns} rollout status daemonset/cilium`;
}

/**
 * Pure: whether `services` Services with `endpointsPerService` backends each
 * fit every node's loaded LB maps on top of what each node holds now.
 */
export function lbMapPreflight(
  services: number,
  endpointsPerService: number,
  ciliumConfig: Readonly<Record<string, string>>,
  nodes: readonly NodeLbMaps[] = [],
  where: PreflightWhere = {},
): LbMapPreflight {
  const configured = configuredLbMapMax(ciliumConfig);
  const existing = Math.max(0, ...nodes.map((n) => n.serviceEntries));
  const existingBackends = Math.max(0, ...nodes.map((n) => n.backendEntries));
  const needed = services * serviceEntriesPer(endpointsPerService) + existing;
  // An upper bound: dummy Services may share backend addresses.
  const neededBackends = services * endpointsPerService + existingBackends;
  const loaded = nodes.filter((n) => n.servicesMax > 0);
  const max = loaded.length ? Math.min(...loaded.map((n) => n.servicesMax)) : configured;
  const backendsLoaded = nodes.filter((n) => n.backendsMax > 0);
  const backendsMax = backendsLoaded.length ? Math.min(...backendsLoaded.map((n) => n.backendsMax)) : configured;
  const source = loaded.length
    ? `loaded maps on ${loaded.map((n) => n.node).join(', ')}`
    : `cilium-config (no node sampled Cilium's maps)`;
  const base = { needed, neededBackends, max, backendsMax, configured, nodes: [...nodes], source };
  if (needed <= max && neededBackends <= backendsMax) return { ...base, fits: true, suggest: 0, fix: '' };
  let suggest = CILIUM_DEFAULT_LB_MAP_MAX;
  while (suggest < Math.max(needed, neededBackends)) suggest *= 2;
  return { ...base, fits: false, suggest, fix: lbMapFixCommand(suggest, where) };
}

/** What the preflight needs from its caller (the collector's Kubernetes side, or the lab). */
export interface LbMapPreflightDeps {
  /** cilium-config's data; undefined: the cluster has no cilium-config (no Cilium: nothing to check). */
  readConfig(): Promise<Record<string, string> | undefined>;
  /** Sets bpf-lb-map-max in cilium-config (null: removes the key). */
  writeConfig(value: string | null): Promise<void>;
  /** Restarts Cilium so every agent loads cilium-config again (DaemonSet rollout; lab: agent restart); resolves once it is done. */
  restart(): Promise<void>;
  /** One fresh dataplane sample per node (keyed by agent or node name). */
  sampleNodes(): Promise<ReadonlyMap<string, DataplaneSample | undefined>>;
  /** The operator's opt-in to change Cilium's configuration. */
  allowChange: boolean;
  log: Logger;
  where?: PreflightWhere;
  /** How long every node's loaded map may take to show the new size (default 5 min). */
  verifyTimeoutMs?: number;
  pollMs?: number;
  signal?: AbortSignal;
}

/** A change ensureLbMapFits made, verified on every node; `revert` undoes it the same way and verifies again. */
export interface LbMapChange {
  check: LbMapPreflight;
  /** The value before ('' when the key was unset) and after. */
  from: string;
  to: number;
  /** From the config write until every node's loaded map read `to`. */
  raisedMs: number;
  revert(): Promise<{ restoredTo: number; verifiedMs: number }>;
}

export interface LbMapPreflightResult {
  check: LbMapPreflight;
  /** Present when the map was raised. */
  change?: LbMapChange;
}

/** A preflight's result as kept afterwards: with what its revert restored, once done. */
export type LbMapPreflightRecord = LbMapPreflightResult & { reverted?: { restoredTo: number; verifiedMs: number } };

async function samplesOf(deps: LbMapPreflightDeps): Promise<NodeLbMaps[]> {
  const samples = await deps.sampleNodes();
  return [...samples].map(([node, s]) => nodeLbMaps(node, s)).filter((n): n is NodeLbMaps => n !== undefined);
}

/**
 * Pure: why `m` (a node's maps after a restart) is not ready for `size`: the
 * loaded maps' max_entries, and, when given, the frontends the node held
 * before the restart. A restarted agent loads empty maps and fills them from
 * the apiserver after it reports ready: until then a Service that worked is
 * not in the map and a connection to it goes nowhere. Undefined when ready.
 */
export function notReadyAfterRestart(
  node: string,
  m: NodeLbMaps | undefined,
  size: number,
  frontendsBefore?: number,
): string | undefined {
  if (!m) return `${node}: no Cilium maps sampled`;
  if (m.servicesMax !== size || m.backendsMax !== size)
    return `${node}: services ${m.servicesMax}, backends ${m.backendsMax}`;
  if (frontendsBefore !== undefined && m.frontends < frontendsBefore)
    return `${node}: ${m.frontends} of the ${frontendsBefore} frontends it had before the restart are back`;
  return undefined;
}

/**
 * Polls the nodes' samples until every node's loaded services and backends
 * maps have max_entries `size` and (when `frontendsBefore` is given) every
 * node's LB map holds again at least the frontends, with all their backends,
 * it held before the restart; the time it took.
 */
async function verifySize(
  deps: LbMapPreflightDeps,
  size: number,
  expectNodes: readonly string[],
  frontendsBefore?: ReadonlyMap<string, number>,
): Promise<number> {
  const began = Date.now();
  const timeout = deps.verifyTimeoutMs ?? 300_000;
  for (;;) {
    if (deps.signal?.aborted)
      throw new CniBenchError(ErrorCodes.CANCELLED, `cancelled while waiting for Cilium's LB map to read ${size}`);
    const samples = await deps.sampleNodes();
    const seen = new Map([...samples].map(([node, s]) => [node, nodeLbMaps(node, s)]));
    const behind = expectNodes
      .map((n) => notReadyAfterRestart(n, seen.get(n), size, frontendsBefore?.get(n)))
      .filter((why): why is string => why !== undefined);
    if (!behind.length) return Date.now() - began;
    if (Date.now() - began > timeout)
      throw new CniBenchError(
        ErrorCodes.TIMEOUT,
        `Cilium's loaded LB maps do not read max_entries ${size} with every Service back on every node ${Math.round(timeout / 1000)} s after the restart (${behind.join('; ')})`,
      );
    await new Promise((r) => setTimeout(r, deps.pollMs ?? 2000));
  }
}

/**
 * The preflight a sweep runs before its first step. Resolves with the check
 * (and the change, when the map was raised); throws a VALIDATION error naming
 * `serviceScale.steps` with the exact command when the sweep does not fit and
 * the operator did not opt in. Undefined when the cluster has no Cilium.
 */
export async function ensureLbMapFits(
  services: number,
  endpointsPerService: number,
  deps: LbMapPreflightDeps,
): Promise<LbMapPreflightResult | undefined> {
  const config = await deps.readConfig();
  if (!config) return undefined;
  const nodes = await samplesOf(deps);
  const check = lbMapPreflight(services, endpointsPerService, config, nodes, deps.where);
  deps.log.info('cilium LB map preflight', {
    services,
    endpointsPerService,
    needed: check.needed,
    max: check.max,
    source: check.source,
    fits: check.fits,
  });
  if (check.fits) return { check };
  if (!deps.allowChange) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `serviceScale.steps: ${services} Services x (${endpointsPerService} endpoints + frontend + wildcard) need ${check.needed} Cilium LB service map entries on top of what the fullest node holds, and the loaded map holds ${check.max} (${check.source}); the map would overflow and show as a false RPS collapse. Run: ${check.fix}  (or let the collector do it: allow-cilium-config-change=true)`,
      {
        details: {
          field: 'serviceScale.steps',
          needed: check.needed,
          max: check.max,
          fix: check.fix,
          nodes: check.nodes,
        },
      },
    );
  }
  const expectNodes = nodes.map((n) => n.node);
  if (!expectNodes.length)
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `serviceScale.steps: bpf-lb-map-max ${check.max} is too small for ${check.needed} LB entries, and no agent sampled Cilium's LB maps on its node, so a raised size could not be verified; nothing was changed. Run: ${check.fix}`,
      { details: { field: 'serviceScale.steps', needed: check.needed, max: check.max, fix: check.fix } },
    );
  const from = config[LB_MAP_MAX_KEY] ?? '';
  const began = Date.now();
  deps.log.warn('raising cilium bpf-lb-map-max for the sweep: Cilium restarts', {
    from: from || '(unset)',
    to: check.suggest,
  });
  await deps.writeConfig(String(check.suggest));
  let raisedMs: number;
  try {
    await deps.restart();
    // The run measures right after: every Service each node had must be back in its new map first.
    await verifySize(deps, check.suggest, expectNodes, new Map(nodes.map((n) => [n.node, n.frontends])));
    raisedMs = Date.now() - began;
  } catch (err) {
    // Leave nothing changed behind a failed raise.
    await deps.writeConfig(from === '' ? null : from).catch(() => undefined);
    await deps.restart().catch(() => undefined);
    throw err;
  }
  deps.log.info('cilium LB map raised and loaded on every node', { to: check.suggest, nodes: expectNodes, raisedMs });
  let reverted: Promise<{ restoredTo: number; verifiedMs: number }> | undefined;
  const change: LbMapChange = {
    check,
    from,
    to: check.suggest,
    raisedMs,
    revert: () => {
      reverted ??= (async () => {
        const t0 = Date.now();
        const restoredTo = from === '' ? CILIUM_DEFAULT_LB_MAP_MAX : Number(from);
        await deps.writeConfig(from === '' ? null : from);
        await deps.restart();
        await verifySize({ ...deps, signal: undefined }, restoredTo, expectNodes);
        const verifiedMs = Date.now() - t0;
        deps.log.info('cilium LB map reverted and verified on every node', { to: restoredTo, verifiedMs });
        return { restoredTo, verifiedMs };
      })();
      return reverted;
    },
  };
  return { check, change };
}
