/**
 * Builds a run's report from what the store holds: one row per measurement with
 * path, tool, value and unit, plus the evidence that the Service rows really
 * went through the service proxy (kube-proxy DNAT counters on the client's node).
 * Pure: it takes records and returns a model; renderers turn it into text.
 */
import type { DataplaneSample, JobResult } from '../../gen/cnibench/v1/agent.js';
import type { PhaseRecord, ResultRecord, RunRecord, SampleRecord } from '../store/store.js';
import { summarisePhase, type NodePhaseSummary } from './phase-dataplane.js';
import { buildSweep, type SweepTable } from './sweep.js';

export interface ReportRow {
  id: string;
  measurement: string;
  path: string;
  tool: string;
  toolVersion: string;
  value: number | null;
  unit: string;
  status: string;
  error: string;
  details: Record<string, number | string | boolean>;
  /** New connections DNATed by KUBE-SEP-* rules on the client's node during the phase; null without samples. */
  dnatConnections: number | null;
  warnings: string[];
  /** Each node's dataplane over the phase, from the samples taken within it. */
  dataplane: NodePhaseSummary[];
}

export interface ReportModel {
  run: { id: string; name: string; state: string; reason: string; createdMs: number; startedMs: number; endedMs: number };
  cluster: unknown;
  rows: ReportRow[];
  /** Present for a Service scale sweep. */
  sweep?: SweepTable;
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
  const usable = (s: DataplaneSample | undefined): s is DataplaneSample => s !== undefined && !s.errors.some((e) => e.startsWith('iptables'));
  if (!usable(before) || !usable(after)) return null;
  if (after.nftServiceIps !== undefined && !after.chains.some((c) => c.chain.startsWith('KUBE-SEP-'))) return null;
  return sumSep(after) - sumSep(before);
}

function valueOf(r: JobResult): { value: number; unit: string; details: ReportRow['details'] } {
  const k = r.measurement?.kind;
  if (k?.$case === 'throughput') {
    const t = k.value;
    return { value: t.bitsPerSecond / 1e9, unit: 'Gbit/s', details: { streams: t.streams, seconds: t.seconds, retransmits: Number(t.retransmits), bytes: Number(t.bytes) } };
  }
  if (k?.$case === 'http') {
    const h = k.value;
    const se = h.socketErrors;
    const p = (q: number) => h.latency?.percentiles.find((x) => x.percentile === q)?.valueUs;
    return {
      value: h.requestsPerSecond,
      unit: 'req/s',
      details: {
        connections: h.connections,
        keepalive: h.keepalive,
        requests: Number(h.requests),
        non2xx: Number(h.non2xx),
        socketErrors: se ? Number(se.connect) + Number(se.read) + Number(se.write) + Number(se.timeout) : 0,
        ...(p(50) !== undefined ? { p50Us: p(50) as number } : {}),
        ...(p(99) !== undefined ? { p99Us: p(99) as number } : {}),
      },
    };
  }
  return { value: NaN, unit: '', details: {} };
}

export function buildReport(run: RunRecord, phases: PhaseRecord[], results: ResultRecord[], samples: SampleRecord[]): ReportModel {
  const scenario = run.scenario as { name?: string };
  const rows = phases.map((p): ReportRow => {
    const detail = p.detail as {
      measurement?: { id?: string; path?: string; tool?: string };
      clientNode?: string;
      startSamples?: Record<string, string>;
      endSamples?: Record<string, string>;
    };
    const m = detail.measurement ?? {};
    const res = results.find((r) => r.phaseIndex === p.index && !r.warmup);
    const v = res ? valueOf(res.result) : undefined;
    const boundary = (ids?: Record<string, string>) => {
      const jobId = detail.clientNode ? ids?.[detail.clientNode] : undefined;
      return jobId ? samples.find((s) => s.sample.samplingJobId === jobId)?.sample : undefined;
    };
    return {
      id: m.id ?? `phase-${p.index}`,
      measurement: p.name,
      path: m.path ?? '',
      tool: res?.result.tool ?? m.tool ?? '',
      toolVersion: res?.result.toolVersion ?? '',
      value: v && Number.isFinite(v.value) ? v.value : null,
      unit: v?.unit ?? '',
      status: p.state,
      error: p.error,
      details: v?.details ?? {},
      dnatConnections: dnatDelta(boundary(detail.startSamples), boundary(detail.endSamples)),
      warnings: res?.result.warnings ?? [],
      dataplane: p.startedMs && p.endedMs ? summarisePhase(samples, p.startedMs, p.endedMs) : [],
    };
  });
  const sweep = buildSweep(phases, rows);
  return {
    run: { id: run.id, name: scenario.name ?? '', state: run.state, reason: run.reason, createdMs: run.createdMs, startedMs: run.startedMs, endedMs: run.endedMs },
    cluster: run.cluster,
    rows,
    ...(sweep ? { sweep } : {}),
  };
}
