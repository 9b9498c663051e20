/**
 * Builds a run's report from what the store holds: one row per measurement with
 * path, tool, value and unit, plus the evidence that the Service rows really
 * went through the service proxy (kube-proxy DNAT counters, or Cilium's socket-LB
 * translations, on the client's node).
 * Pure: it takes records and returns a model; renderers turn it into text.
 */

import type { ClusterDescription } from '../core/cluster.js';
import { SINGLE_THREADED_SERVERS } from '../core/tools.js';
import type { ClientObservation, DataplaneSample, JobResult } from '../gen/cnibench/v1/agent.js';
import { buildConditions, type ConditionsTable } from './conditions.js';
import { type PhaseCpuDetail, phaseCpuCost } from './cpu-cost.js';
import { buildDisruptions, type DisruptionEntry, errorsAfterEvent } from './disruption-report.js';
import {
  type CounterPair,
  dispersionGuard,
  evaluateGuards,
  type Guard,
  type GuardThresholds,
  type SamplePair,
  sendLagOf,
} from './guards.js';
import { summarisePhase } from './phase-dataplane.js';
import type { PhaseRecord, ResultRecord, RunRecord, SampleRecord } from './records.js';
import type { ReportRow } from './report-row.js';
import { rowMetrics } from './row-metrics.js';
import { buildSweep, type SweepTable } from './sweep.js';

export type { ReportRow };

export interface ReportModel {
  run: {
    id: string;
    name: string;
    state: string;
    reason: string;
    createdMs: number;
    startedMs: number;
    endedMs: number;
  };
  /** What the collector knew when the run started (agents, tools, dataplane), plus its one-line description. */
  cluster: { description: ClusterDescription } & Record<string, unknown>;
  rows: ReportRow[];
  /** Present for a Service scale sweep. */
  sweep?: SweepTable;
  /** Present for a run with overhead conditions (report/conditions.ts). */
  conditions?: ConditionsTable;
  /** Present for a run with disruption phases (report/disruption-report.ts): the event and the timeline around it. */
  disruptions?: DisruptionEntry[];
}

function sumSep(s: DataplaneSample): number {
  return s.chains.filter((c) => c.chain.startsWith('KUBE-SEP-')).reduce((n, c) => n + Number(c.packets), 0);
}

/**
 * Delta of KUBE-SEP packet counters between two samples; null when either is
 * missing, its iptables read failed, or the node runs kube-proxy in nftables
 * mode (its service-ips map exists and no KUBE-SEP chain does): that mode
 * keeps no per-rule counters.
 */
export function dnatDelta(before: DataplaneSample | undefined, after: DataplaneSample | undefined): number | null {
  const usable = (s: DataplaneSample | undefined): s is DataplaneSample =>
    s !== undefined && !s.errors.some((e) => e.startsWith('iptables'));
  if (!usable(before) || !usable(after)) return null;
  const noSep = !after.chains.some((c) => c.chain.startsWith('KUBE-SEP-'));
  if (noSep && (after.nftServiceIps !== undefined || after.cilium !== undefined)) return null;
  return sumSep(after) - sumSep(before);
}

/**
 * Delta of Cilium's socket-LB translations between two samples of the client's
 * node; null when either lacks the counter (no Cilium, or its metrics map
 * failed to read, which the sample names in its errors).
 */
export function socketLbDelta(before: DataplaneSample | undefined, after: DataplaneSample | undefined): number | null {
  const a = before?.cilium?.socketLbXlatedClosed;
  const b = after?.cilium?.socketLbXlatedClosed;
  if (a === undefined || b === undefined) return null;
  // A restarted agent keeps the pinned map, so the counter does not go back; if it does, the delta is unknown.
  return b >= a ? b - a : null;
}

/** Totals over the rounds that the notes column shows beside the number. */
function detailsOf(results: readonly JobResult[]): ReportRow['details'] {
  const d: ReportRow['details'] = {};
  const add = (k: string, v: number): void => {
    d[k] = (typeof d[k] === 'number' ? (d[k] as number) : 0) + v;
  };
  for (const r of results) {
    const k = r.measurement?.kind;
    if (k?.$case === 'throughput') {
      d.streams = k.value.streams;
      add('retransmits', Number(k.value.retransmits));
      if (k.value.protocol === 'udp') add('lostPackets', Number(k.value.lostPackets));
    } else if (k?.$case === 'http') {
      const se = k.value.socketErrors;
      d.connections = k.value.connections;
      d.keepalive = k.value.keepalive;
      add('requests', Number(k.value.requests));
      add('non2xx', Number(k.value.non2xx));
      add('socketErrors', se ? Number(se.connect) + Number(se.read) + Number(se.write) + Number(se.timeout) : 0);
      if (k.value.targetQps > 0) d.targetQps = k.value.targetQps;
    } else if (k?.$case === 'rr') {
      add('transactions', Number(k.value.transactions));
      add('errors', Number(k.value.errors));
    }
  }
  return d;
}

/** The union of the guards that fired in any round, one per code, the first round's words. */
function mergeGuards(perRound: readonly Guard[][]): Guard[] {
  const byCode = new Map<string, Guard>();
  for (const gs of perRound) for (const g of gs) if (!byCode.has(g.code)) byCode.set(g.code, g);
  return [...byCode.values()];
}

/** A measurement phase's record: its nodes and per-round CPU samples as the CPU cost reads them, and more. */
interface MeasureDetail extends PhaseCpuDetail {
  measurement?: { id?: string; path?: string; tool?: string; serverTool?: string; rounds?: number };
  step?: number;
  startSamples?: Record<string, string>;
  endSamples?: Record<string, string>;
}

export interface ReportContext {
  /** Link speed the scenario declared (Gbit/s), for the link-rate guard where agents could not read it. */
  linkGbps?: number;
  /** CPUs of the server node's agent, the ceiling of multi-threaded servers. */
  serverCpus?: number;
}

export function buildReport(
  run: RunRecord,
  phases: PhaseRecord[],
  results: ResultRecord[],
  samples: SampleRecord[],
): ReportModel {
  const scenario = run.scenario as { name?: string; linkGbps?: number; guardThresholds?: Partial<GuardThresholds> };
  const cluster = (run.cluster ?? {}) as ReportModel['cluster'];
  const byJob = new Map(samples.map((s) => [s.sample.samplingJobId, s.sample]));
  const serverCpus = (cluster.server as { cpus?: number } | undefined)?.cpus;
  const rows = phases.map((p): ReportRow => {
    const detail = p.detail as MeasureDetail;
    const m = detail.measurement ?? {};
    const measured = results
      .filter((r) => r.phaseIndex === p.index && !r.warmup)
      .sort((a, b) => (a.result.round ?? 0) - (b.result.round ?? 0));
    const res = measured.map((r) => r.result);
    const metrics = rowMetrics(res);
    const boundary = (ids: Record<string, string> | undefined, node: string | undefined) =>
      node && ids?.[node] ? byJob.get(ids[node] as string) : undefined;
    const clientSamples = {
      start: boundary(detail.startSamples, detail.clientNode),
      end: boundary(detail.endSamples, detail.clientNode),
    };
    const serverPhase = {
      start: boundary(detail.startSamples, detail.serverNode),
      end: boundary(detail.endSamples, detail.serverNode),
    };
    const serverTool = m.serverTool;
    const capacity = serverTool ? (SINGLE_THREADED_SERVERS.has(serverTool) ? 1 : (serverCpus ?? 0)) : 0;
    const namespaces = namespacesOf(m.path);
    const guards = mergeGuards(
      res.map((r) => {
        const bracket = detail.rounds?.find((x) => x.round === r.round);
        const observation = withDeclaredLink(r.observation, scenario.linkGbps);
        return evaluateGuards({
          result: r,
          ...(observation ? { observation } : {}),
          clientSamples,
          serverSamples: bracketed(serverPhase, bracket, byJob),
          clientTcp: tcpPair(byJob, bracket?.clientBefore, bracket?.clientAfter, namespaces.client),
          serverTcp: tcpPair(byJob, bracket?.serverBefore, bracket?.serverAfter, namespaces.server),
          ...(serverTool ? { serverTool, serverCapacityCores: capacity } : {}),
          rounds: res.length,
          ...(scenario.guardThresholds ? { thresholds: scenario.guardThresholds } : {}),
        });
      }),
    );
    const invalidating = guards.find((g) => g.invalidates);
    // An invalid row has no number, so no spread to speak of.
    const sendLag = sendLagOf(res, metrics[0]);
    const spread = dispersionGuard({
      cv: metrics[0]?.summary?.cv ?? null,
      n: metrics[0]?.summary?.n ?? 0,
      fired: guards,
      ...loadOf(detail, byJob),
      ...(sendLag ? { clientSendLag: sendLag } : {}),
      ...(scenario.guardThresholds ? { thresholds: scenario.guardThresholds } : {}),
    });
    if (spread && !invalidating) guards.push(spread);

    const invalid = invalidating
      ? { code: invalidating.code, reason: invalidating.message, counters: invalidating.counters ?? {} }
      : undefined;
    const cost = phaseCpuCost(p.detail as PhaseCpuDetail, res, byJob);
    if (cost.metric && !invalid) metrics.push(cost.metric);
    const head = invalid ? undefined : metrics[0];
    const pathMtu = res.find((r) => r.pathMtu)?.pathMtu;
    return {
      id: m.id ?? `phase-${p.index}`,
      measurement: p.name,
      path: m.path ?? '',
      tool: res[0]?.tool ?? m.tool ?? '',
      toolVersion: res[0]?.toolVersion ?? '',
      value: head && Number.isFinite(head.value) ? head.value : null,
      unit: head?.unit ?? '',
      status: p.state,
      error: p.error,
      details: detailsOf(res),
      dnatConnections: dnatDelta(clientSamples.start, clientSamples.end),
      socketLbTranslated: socketLbDelta(clientSamples.start, clientSamples.end),
      warnings: guards,
      rounds: res.length,
      metrics: invalid ? [] : metrics,
      ...(invalid ? { invalid } : {}),
      ...(detail.step !== undefined ? { step: detail.step } : {}),
      dataplane: p.startedMs && p.endedMs ? summarisePhase(samples, p.startedMs, p.endedMs) : [],
      ...(cost.cpu ? { cpu: cost.cpu } : cost.missing && res.length ? { cpuMissing: cost.missing } : {}),
      ...(pathMtu ? { pathMtu } : {}),
    };
  });
  const sweep = buildSweep(phases, rows);
  const conditions = buildConditions(phases, rows);
  const disruptions = buildDisruptions(phases, results);
  for (const d of disruptions) {
    // A disruption row's number is the failed probes from the event on; its section has the timeline. One event,
    // one round: no interval to miss; its Service is gone by the phase's end sample, so no DNAT delta either.
    const row = rows[phases.findIndex((p) => p.index === d.phaseIndex)];
    if (!row) continue;
    Object.assign(row, { value: errorsAfterEvent(d), unit: 'errors after event', dnatConnections: null });
    row.warnings = row.warnings.filter((w) => w.code !== 'few-samples');
    delete row.cpuMissing;
  }
  return {
    run: {
      id: run.id,
      name: scenario.name ?? '',
      state: run.state,
      reason: run.reason,
      createdMs: run.createdMs,
      startedMs: run.startedMs,
      endedMs: run.endedMs,
    },
    cluster: { ...cluster, description: cluster.description ?? UNKNOWN_CLUSTER },
    rows,
    ...(sweep ? { sweep } : {}),
    ...(conditions ? { conditions } : {}),
    ...(disruptions.length ? { disruptions } : {}),
  };
}

const UNKNOWN_CLUSTER = Object.freeze({
  kubernetesVersion: 'unknown',
  cni: 'unknown',
  cniMode: '',
  kubeProxyMode: 'unknown',
  kernel: 'unknown',
  nodeType: 'unknown',
});

/** The round's servers-only samples where both arrived, else the phase's boundary samples. */
function bracketed(
  phase: SamplePair,
  bracket: { serverBefore?: string; serverAfter?: string } | undefined,
  byJob: ReadonlyMap<string, DataplaneSample>,
): SamplePair {
  const start = bracket?.serverBefore ? byJob.get(bracket.serverBefore) : undefined;
  const end = bracket?.serverAfter ? byJob.get(bracket.serverAfter) : undefined;
  return start && end ? { start, end } : phase;
}

/** Which namespace (the agent's pod one or the node's) each end of a path runs in (collector/runs/measure-phase.ts placementOf). */
function namespacesOf(path: string | undefined): { client: string; server: string } {
  return {
    client: path === 'host-to-host' ? 'host' : 'pod',
    server: path === 'host-to-host' || path === 'pod-to-host' ? 'host' : 'pod',
  };
}

/** The highest load average the phase's round brackets saw, and the machine's CPUs as the report knows them (lab: the collector's machine). */
function loadOf(
  detail: MeasureDetail,
  byJob: ReadonlyMap<string, DataplaneSample>,
): { loadAverage?: number; cpus?: number } {
  const ids = (detail.rounds ?? []).flatMap((r) => [r.serverBefore, r.serverAfter, r.clientBefore, r.clientAfter]);
  const samples = ids
    .map((id) => (id ? byJob.get(id) : undefined))
    .filter((s): s is DataplaneSample => s !== undefined);
  const loads = samples.map((s) => s.loadAverage).filter((x) => x > 0);
  const cpus = Math.max(0, ...samples.map((s) => s.machineCpus));
  return { ...(loads.length ? { loadAverage: Math.max(...loads) } : {}), ...(cpus ? { cpus } : {}) };
}

/** One namespace's TCP counters from a round's two bracket samples. */
function tcpPair(
  byJob: ReadonlyMap<string, DataplaneSample>,
  before: string | undefined,
  after: string | undefined,
  netns: string,
): CounterPair {
  const of = (id: string | undefined) =>
    id ? byJob.get(id)?.tcpCounters?.find((c) => c.netns === netns)?.counters : undefined;
  const start = of(before);
  const end = of(after);
  return { ...(start ? { start } : {}), ...(end ? { end } : {}) };
}

/** The agent's link speed when it read one, else the scenario's declared one. */
function withDeclaredLink(
  o: ClientObservation | undefined,
  linkGbps: number | undefined,
): ClientObservation | undefined {
  if (!o || o.linkSpeedMbps > 0 || !linkGbps) return o;
  return { ...o, linkSpeedMbps: Math.round(linkGbps * 1000) };
}
