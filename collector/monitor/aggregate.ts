/**
 * The cluster's monitoring view from the agents' latest reports, pure: the
 * node-to-node matrix (state from each source's latest round, latency from the
 * histograms of its recent rounds merged, never averaged percentiles), each
 * node's state, coverage and dataplane, and a summary with per-type latency.
 */
import { LatencyHistogram } from '../../core/histogram.js';
import type { Histogram, MonitorPlan, MonitorReport, ProbeOutcome } from '../../gen/cnibench/v1/agent.js';
import type {
  MonitorCell,
  MonitorNode,
  MonitorSnapshot,
  MonitorSummary,
  NodeDataplane,
  TypeLatency,
} from '../../gen/cnibench/v1/monitor.js';

export interface ReceivedReport {
  report: MonitorReport;
  receivedMs: number;
}

export interface AgentMonitorState {
  node: string;
  connected: boolean;
  plan: MonitorPlan | undefined;
  /** Oldest first; the last is the latest. */
  reports: readonly ReceivedReport[];
}

/** A node without a report for this many intervals is stale. */
export const STALE_INTERVALS = 3;
const POD_TYPES = ['tcp-connect', 'tcp-rr'];
const HOST_TYPES = ['host-tcp-connect', 'host-tcp-rr'];

function outcomeOf(r: MonitorReport | undefined, type: string, target: string): ProbeOutcome | undefined {
  return r?.probes.find((p) => p.type === type && p.targetNode === target);
}

function windowOf(
  a: AgentMonitorState,
  type: string,
  target: string,
): { hist: Histogram[]; ok: number; failed: number } {
  const out = { hist: [] as Histogram[], ok: 0, failed: 0 };
  for (const { report } of a.reports) {
    const o = outcomeOf(report, type, target);
    if (!o) continue;
    out.ok += o.ok;
    out.failed += o.failed;
    if (o.latency && o.latency.total > 0) out.hist.push(o.latency);
  }
  return out;
}

function merged(hs: readonly Histogram[]): LatencyHistogram | undefined {
  if (hs.length === 0) return undefined;
  const out = new LatencyHistogram(hs[0]?.subBucketBits);
  for (const h of hs) out.merge(LatencyHistogram.fromProto(h));
  return out;
}

function cellOf(
  a: AgentMonitorState,
  type: string,
  target: string,
  targetPaused: boolean,
  nowMs: number,
): { cell: MonitorCell; hist: Histogram[] } {
  const latest = a.reports.at(-1);
  const o = outcomeOf(latest?.report, type, target);
  const w = windowOf(a, type, target);
  const h = merged(w.hist);
  let state: string;
  if (a.plan?.paused || latest?.report.paused || targetPaused) state = 'paused';
  else if (o) state = o.failed > 0 ? 'failing' : 'ok';
  else state = !latest || latest.report.planGeneration < (a.plan?.generation ?? 0) ? 'pending' : 'missing';
  const cell: MonitorCell = {
    sourceNode: a.node,
    targetNode: target,
    type,
    state,
    errorReason: o && o.failed > 0 ? o.errorReason : '',
    p50Us: h ? h.percentile(50) : 0,
    p99Us: h ? h.percentile(99) : 0,
    samples: w.ok,
    failures: w.failed,
    ageMs: latest ? Math.max(0, nowMs - latest.receivedMs) : 0,
    answeredBy: o?.answeredBy ?? [],
  };
  return { cell, hist: w.hist };
}

/** Every planned (source, target, type) cell, and the window histograms per type for the summary. */
export function buildMatrix(
  agents: readonly AgentMonitorState[],
  nowMs: number,
): { cells: MonitorCell[]; byType: Map<string, Histogram[]> } {
  const cells: MonitorCell[] = [];
  const byType = new Map<string, Histogram[]>();
  const add = (r: { cell: MonitorCell; hist: Histogram[] }): void => {
    cells.push(r.cell);
    const list = byType.get(r.cell.type) ?? [];
    list.push(...r.hist);
    byType.set(r.cell.type, list);
  };
  for (const a of agents) {
    for (const p of a.plan?.peers ?? []) {
      for (const type of [...POD_TYPES, ...(p.hostProbePort ? HOST_TYPES : [])])
        add(cellOf(a, type, p.nodeName, p.paused, nowMs));
    }
    if (a.plan?.service?.ip) add(cellOf(a, 'http-service', '', a.plan.servicePaused, nowMs));
  }
  return { cells, byType };
}

function dataplaneOf(r: MonitorReport | undefined): NodeDataplane | undefined {
  const d = r?.dataplane;
  if (!d) return undefined;
  return {
    timeMs: d.timeMs,
    conntrackEntries: d.conntrackCount,
    conntrackMax: d.conntrackMax,
    conntrackFillRatio: d.conntrackMax > 0 ? d.conntrackCount / d.conntrackMax : 0,
    iptablesRules: d.iptablesRules,
    kubeServicesRules: d.kubeServicesRules,
    nftRules: d.nftRules,
    nftServiceIps: d.nftServiceIps,
    bpfMaps: r.bpfMaps,
    processes: d.processes,
    errors: d.errors,
  };
}

function nodeState(a: AgentMonitorState, nowMs: number): string {
  const latest = a.reports.at(-1);
  if (!a.connected) return 'disconnected';
  if (a.plan?.paused || latest?.report.paused) return 'paused';
  if (!latest) return 'starting';
  if (nowMs - latest.receivedMs > STALE_INTERVALS * (latest.report.intervalMs || 30_000)) return 'stale';
  return 'probing';
}

/** Per target node: sources whose latest probes to it all succeeded, and those with a failure. */
export function coverage(cells: readonly MonitorCell[]): Map<string, { ok: Set<string>; failing: Set<string> }> {
  const out = new Map<string, { ok: Set<string>; failing: Set<string> }>();
  for (const c of cells) {
    if (!c.targetNode || (c.state !== 'ok' && c.state !== 'failing')) continue;
    const e = out.get(c.targetNode) ?? { ok: new Set<string>(), failing: new Set<string>() };
    (c.state === 'failing' ? e.failing : e.ok).add(c.sourceNode);
    out.set(c.targetNode, e);
  }
  for (const e of out.values()) for (const s of e.failing) e.ok.delete(s);
  return out;
}

function nodesOf(agents: readonly AgentMonitorState[], cells: readonly MonitorCell[], nowMs: number): MonitorNode[] {
  const cov = coverage(cells);
  return agents.map((a) => {
    const latest = a.reports.at(-1);
    const c = cov.get(a.node);
    return {
      nodeName: a.node,
      state: nodeState(a, nowMs),
      reportAgeMs: latest ? Math.max(0, nowMs - latest.receivedMs) : 0,
      intervalMs: latest?.report.intervalMs ?? 0,
      peers: (a.plan?.peers ?? []).map((p) => p.nodeName),
      incomingSources: latest?.report.incomingSources ?? [],
      probedOk: c?.ok.size ?? 0,
      probedFailing: c?.failing.size ?? 0,
      dataplane: dataplaneOf(latest?.report),
    };
  });
}

function summaryOf(
  nodes: readonly MonitorNode[],
  cells: readonly MonitorCell[],
  byType: Map<string, Histogram[]>,
  pausedForRun: string,
  windowReports: number,
): MonitorSummary {
  const pairs = new Map<string, string[]>();
  for (const c of cells) {
    if (!c.targetNode) continue;
    const key = `${c.sourceNode}\u0000${c.targetNode}`;
    pairs.set(key, [...(pairs.get(key) ?? []), c.state]);
  }
  const states = [...pairs.values()];
  const latency: TypeLatency[] = [...byType]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, hs]) => {
      const h = merged(hs);
      const mine = cells.filter((c) => c.type === type);
      return {
        type,
        p50Us: h ? h.percentile(50) : 0,
        p99Us: h ? h.percentile(99) : 0,
        samples: mine.reduce((n, c) => n + c.samples, 0),
        failures: mine.reduce((n, c) => n + c.failures, 0),
      };
    });
  const count = (s: string) => nodes.filter((n) => n.state === s).length;
  return {
    nodes: nodes.length,
    probing: count('probing'),
    paused: count('paused'),
    stale: count('stale'),
    pairsOk: states.filter((s) => s.every((x) => x === 'ok')).length,
    pairsFailing: states.filter((s) => s.includes('failing')).length,
    pairsMissing: states.filter((s) => s.every((x) => x === 'missing' || x === 'pending')).length,
    latency,
    pausedForRun,
    windowReports,
  };
}

export function buildSnapshot(
  agents: readonly AgentMonitorState[],
  nowMs: number,
  pausedForRun = '',
  windowReports = 0,
): MonitorSnapshot {
  const sorted = [...agents].sort((a, b) => a.node.localeCompare(b.node));
  const { cells, byType } = buildMatrix(sorted, nowMs);
  const nodes = nodesOf(sorted, cells, nowMs);
  return { timeMs: nowMs, nodes, matrix: cells, summary: summaryOf(nodes, cells, byType, pausedForRun, windowReports) };
}
