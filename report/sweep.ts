/**
 * The Service scale sweep as tables: per step, how long programming and sync
 * took and what the client's node showed; per measurement, its value at every
 * step and the change against the first step (the baseline). Across runs (one
 * per proxy mode), where one mode overtakes the other. Pure.
 */

import type { PhaseRecord } from './records.js';
import type { ReportRow } from './report-row.js';
import { compareRounds } from './significance.js';

export interface SweepStep {
  services: number;
  programmingMs: number | null;
  syncMs: number | null;
  /** How long the last sync poll (one sample of every node) took; syncMs includes it. */
  pollMs: number | null;
  /**
   * Programming latency: from the step's first Service write until the round
   * of dataplane samples that showed every node holding the step had arrived
   * (an upper bound; see latencyResolutionMs). Null in runs stored before it was measured.
   */
  programmingLatencyMs: number | null;
  /** How far below programmingLatencyMs the true moment may lie (the polling resolution at this step). */
  latencyResolutionMs: number | null;
  /** The pause between rounds of sync samples. */
  pollPauseMs: number | null;
  /** What the slowest node showed when the step was in sync. */
  kubeServicesRules: number | null;
  nftServiceIps: number | null;
  /** Cilium LB frontends with all their backends (null where a node had no Cilium maps). */
  ciliumFrontends: number | null;
  status: string;
}

export interface SweepSeries {
  id: string;
  label: string;
  unit: string;
  values: (number | null)[];
  /** Every measured round's value per step (what the crossovers test); null where the step has none. */
  rounds: (number[] | null)[];
  /** Relative change against the first step: -0.59 is 59% lower. */
  change: (number | null)[];
}

export interface SweepTable {
  steps: SweepStep[];
  series: SweepSeries[];
}

interface ScaleDetail {
  scale?: { services: number };
  programmingMs?: number;
  syncMs?: number;
  pollMs?: number;
  pollPauseMs?: number;
  programmingLatencyMs?: number;
  latencyResolutionMs?: number;
  nodes?: Record<string, { kubeServicesRules: number; nftServiceIps: number | null; ciliumFrontends?: number | null }>;
}

/** Builds the sweep table from a run's phases and report rows (same order), or undefined for a run without a sweep. */
export function buildSweep(phases: PhaseRecord[], rows: ReportRow[]): SweepTable | undefined {
  const steps: SweepStep[] = [];
  for (const p of phases) {
    const d = p.detail as ScaleDetail;
    if (!d.scale) continue;
    const nodes = Object.values(d.nodes ?? {});
    steps.push({
      services: d.scale.services,
      programmingMs: d.programmingMs ?? null,
      syncMs: d.syncMs ?? null,
      pollMs: d.pollMs ?? null,
      programmingLatencyMs: d.programmingLatencyMs ?? null,
      latencyResolutionMs: d.latencyResolutionMs ?? null,
      pollPauseMs: d.pollPauseMs ?? null,
      kubeServicesRules: nodes.length ? Math.min(...nodes.map((n) => n.kubeServicesRules)) : null,
      nftServiceIps:
        nodes.length && nodes.every((n) => n.nftServiceIps !== null)
          ? Math.min(...nodes.map((n) => n.nftServiceIps as number))
          : null,
      ciliumFrontends:
        nodes.length && nodes.every((n) => typeof n.ciliumFrontends === 'number')
          ? Math.min(...nodes.map((n) => n.ciliumFrontends as number))
          : null,
      status: p.state,
    });
  }
  if (!steps.length) return undefined;
  const byId = new Map<string, SweepSeries>();
  phases.forEach((p, i) => {
    const d = p.detail as { step?: number; measurement?: { id: string } };
    const row = rows[i];
    if (d.step === undefined || !d.measurement || !row) return;
    let s = byId.get(d.measurement.id);
    if (!s) {
      s = {
        id: d.measurement.id,
        label: row.measurement.replace(/ @ .*$/, ''),
        unit: row.unit,
        values: steps.map(() => null),
        rounds: steps.map(() => null),
        change: steps.map(() => null),
      };
      byId.set(d.measurement.id, s);
    }
    // A sweep compares rates (higher is better): TCP_CRR's connections per second, not its latency headline.
    const rate = row.metrics.find((m) => m.higherIsBetter);
    const unit = rate?.unit ?? row.unit;
    if (unit) s.unit = unit;
    const at = steps.findIndex((st) => st.services === d.step);
    if (at >= 0) {
      s.values[at] = rate && Number.isFinite(rate.value) ? rate.value : row.value;
      const per = rate?.perRound.filter(Number.isFinite) ?? [];
      s.rounds[at] = per.length ? per : s.values[at] === null ? null : [s.values[at] as number];
    }
  });
  for (const s of byId.values()) {
    const base = s.values[0];
    s.change = s.values.map((v) =>
      v === null || base === null || base === undefined || base === 0 ? null : v / base - 1,
    );
  }
  return { steps, series: [...byId.values()] };
}

export interface Crossover {
  /** Plain sentence for the report. */
  text: string;
  /** The last step where the final leader was not ahead, and the first from which it stays ahead; null without a lasting change. */
  between: [number, number] | null;
  /** Linear estimate of where the difference crosses zero within `between`, when it changes sign there. */
  estimate: number | null;
}

/** Relative difference below which two steps count as tied even when the test is significant (core/significance.ts). */
export const CROSSOVER_NOISE_FLOOR = 0.03;

type Lead = 'a' | 'b' | 'tie' | null;

/** One series' rounds per step: every round's value, or null where the step has none. */
export type StepRounds = readonly (readonly number[] | null)[];

/**
 * Who leads at one step: 'a' or 'b' only when their rounds differ
 * significantly (core/significance.ts compareRounds: Welch's t-test below
 * 0.05, disjoint 95% intervals, and a difference above the noise floor);
 * with one round a side only a difference over five noise floors counts.
 */
function leadAt(a: readonly number[] | null, b: readonly number[] | null, noiseFloor: number): Lead {
  if (!a?.length || !b?.length) return null;
  const v = compareRounds(b, a, { higherIsBetter: true, noiseFloor }).verdict;
  return v === 'better' ? 'a' : v === 'worse' ? 'b' : 'tie';
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/**
 * Where one series overtakes the other for good (higher is better: buildSweep
 * keeps rates), over the same steps, from every round's value. Each step is
 * 'a' ahead, 'b' ahead or a tie (not significantly different); the leader at
 * the last step compared is the winner, and the crossover is where it took
 * the lead it then kept. The linear estimate uses the steps' medians.
 */
export function crossover(
  steps: number[],
  aName: string,
  a: StepRounds,
  bName: string,
  b: StepRounds,
  noiseFloor = CROSSOVER_NOISE_FLOOR,
): Crossover {
  const lead: Lead[] = steps.map((_, i) => leadAt(a[i] ?? null, b[i] ?? null, noiseFloor));
  const known = lead.map((l, i) => (l === null ? -1 : i)).filter((i) => i >= 0);
  if (!known.length)
    return { text: `no step has values for both ${aName} and ${bName}`, between: null, estimate: null };
  const first = known[0] as number;
  const last = known.at(-1) as number;
  const fmtN = (n: number | undefined): string => (n ?? 0).toLocaleString('en-US');
  const gaps =
    known.length < steps.length
      ? `; ${steps.length - known.length} of ${steps.length} steps lack a value for one of them`
      : '';
  const n = Math.min(...known.flatMap((i) => [a[i]?.length ?? 0, b[i]?.length ?? 0]));
  const rule =
    n >= 2
      ? `ahead only where the rounds differ significantly: Welch p < 0.05, disjoint 95% intervals, over ${Math.round(noiseFloor * 100)}%`
      : `one round at some steps: ahead only by over ${Math.round(5 * noiseFloor * 100)}%`;
  const tiesNote = `${rule}${gaps}`;
  const winner = lead[last];
  if (winner === 'tie')
    return {
      text: `${aName} and ${bName} are within noise of each other at ${fmtN(steps[last])} Services (${tiesNote})`,
      between: null,
      estimate: null,
    };
  const [w, l] = winner === 'a' ? [aName, bName] : [bName, aName];
  // The last compared step where the winner was not ahead.
  let k = known.length - 1;
  while (k >= 0 && lead[known[k] as number] === winner) k--;
  if (k < 0)
    return {
      text: `${w} is ahead of ${l} at every step compared (${fmtN(steps[first])} to ${fmtN(steps[last])} Services; ${tiesNote})`,
      between: null,
      estimate: null,
    };
  const i = known[k] as number;
  const j = known[k + 1] as number;
  const d0 = median(a[i] as number[]) - median(b[i] as number[]);
  const d1 = median(a[j] as number[]) - median(b[j] as number[]);
  const x0 = steps[i] as number;
  const x1 = steps[j] as number;
  const estimate = d0 !== d1 && Math.sign(d0) !== Math.sign(d1) ? Math.round(x0 + ((x1 - x0) * d0) / (d0 - d1)) : null;
  return {
    text: `${w} overtakes ${l} between ${fmtN(x0)} and ${fmtN(x1)} Services${estimate !== null ? ` (linear estimate ${fmtN(estimate)})` : ''} and stays ahead (${tiesNote})`,
    between: [x0, x1],
    estimate,
  };
}

export interface SweepComparison {
  steps: number[];
  runs: string[];
  series: {
    id: string;
    label: string;
    unit: string;
    /** Per run (same order as `runs`): value and change against its own baseline, per step. */
    byRun: { values: (number | null)[]; rounds: (number[] | null)[]; change: (number | null)[] }[];
    /** Where the second run overtakes the first (and so on for each later run against the first). */
    crossovers: Crossover[];
  }[];
  /** Per run (same order as `runs`), per shared step: its programming latency and resolution (null where not measured). */
  latency: { latencyMs: (number | null)[]; resolutionMs: (number | null)[]; pollPauseMs: number | null }[];
}

/** Puts the sweeps of several runs (one per proxy mode) side by side on the steps they share. */
export function compareSweeps(runs: { label: string; sweep: SweepTable }[]): SweepComparison {
  const steps =
    runs[0]?.sweep.steps
      .map((s) => s.services)
      .filter((n) => runs.every((r) => r.sweep.steps.some((s) => s.services === n))) ?? [];
  const ids =
    runs[0]?.sweep.series.map((s) => s.id).filter((id) => runs.every((r) => r.sweep.series.some((s) => s.id === id))) ??
    [];
  const stepOf = (r: { sweep: SweepTable }, n: number) => r.sweep.steps.find((st) => st.services === n);
  return {
    steps,
    runs: runs.map((r) => r.label),
    latency: runs.map((r) => ({
      latencyMs: steps.map((n) => stepOf(r, n)?.programmingLatencyMs ?? null),
      resolutionMs: steps.map((n) => stepOf(r, n)?.latencyResolutionMs ?? null),
      pollPauseMs: r.sweep.steps.find((st) => st.pollPauseMs !== null)?.pollPauseMs ?? null,
    })),
    series: ids.map((id) => {
      const per = runs.map((r) => {
        const s = r.sweep.series.find((x) => x.id === id) as SweepSeries;
        const at = (n: number) => r.sweep.steps.findIndex((st) => st.services === n);
        return {
          s,
          values: steps.map((n) => s.values[at(n)] ?? null),
          rounds: steps.map((n) => s.rounds?.[at(n)] ?? (s.values[at(n)] == null ? null : [s.values[at(n)] as number])),
          change: steps.map((n) => s.change[at(n)] ?? null),
        };
      });
      const first = per[0] as (typeof per)[number];
      return {
        id,
        label: first.s.label,
        unit: first.s.unit,
        byRun: per.map((p) => ({ values: p.values, rounds: p.rounds, change: p.change })),
        crossovers: per
          .slice(1)
          .map((p, i) => crossover(steps, runs[0]?.label ?? '', first.rounds, runs[i + 1]?.label ?? '', p.rounds)),
      };
    }),
  };
}
