/**
 * The overhead table: each measurement under each condition beside its
 * baseline (the same measurement in the same run without it), the change, and
 * whether the change is within noise (significance.ts), plus how each
 * condition was verified (or why it could not be, in which case the row has no
 * value). Pure.
 */
import type { ConditionEvidence } from '../core/conditions.js';
import type { PhaseRecord } from './records.js';
import type { ReportRow } from './report-row.js';
import { compareRounds, type Verdict } from './significance.js';

export interface ConditionRow {
  condition: string;
  group: string;
  measurementId: string;
  measurement: string;
  unit: string;
  baseline: number | null;
  value: number | null;
  /** value / baseline - 1 (-0.1 is 10% lower); null without both. */
  change: number | null;
  verdict: Verdict | null;
  reason: string;
  /** Which baseline: the one measured right before the condition's group ('adjacent'), or the run's first ('run'). */
  baselineFrom: 'adjacent' | 'run';
  /** 95% intervals of the mean over the rounds (baseline, under the condition); null with fewer than 2 rounds. */
  baselineCi95: [number, number] | null;
  valueCi95: [number, number] | null;
  /** The phase failed (its condition unverified, or the measurement itself): the reason, and no value. */
  error: string;
}

export interface ConditionStep {
  condition: string;
  group: string;
  action: 'apply' | 'revert';
  status: string;
  /** How the dataplane showed it, or why it could not be shown. */
  how: string;
  enforcementMs: number | null;
  apiMs: number | null;
  policies: number | null;
}

export interface ConditionsTable {
  steps: ConditionStep[];
  rows: ConditionRow[];
}

interface Detail {
  measurement?: { id: string };
  condition?: {
    label?: string;
    group: string;
    baseline?: boolean;
    action?: 'apply' | 'revert';
    request?: { kind: string; policies?: number };
  };
  evidence?: ConditionEvidence;
}

/** The headline rate of a row (what overhead is judged on), with its rounds. */
function rateOf(row: ReportRow): { value: number | null; rounds: number[]; unit: string; higherIsBetter: boolean } {
  const m = row.metrics.find((x) => x.higherIsBetter) ?? row.metrics[0];
  if (!m || !Number.isFinite(m.value)) return { value: null, rounds: [], unit: row.unit, higherIsBetter: true };
  return { value: m.value, rounds: m.perRound.filter(Number.isFinite), unit: m.unit, higherIsBetter: m.higherIsBetter };
}

/** Builds the table from a run's phases and report rows (same order); undefined for a run without conditions. */
export function buildConditions(phases: PhaseRecord[], rows: ReportRow[]): ConditionsTable | undefined {
  const steps: ConditionStep[] = [];
  const out: ConditionRow[] = [];
  const baselines = new Map<string, ReportRow>();
  /** Each group's adjacent baseline (measured right before it), by group and measurement. */
  const adjacent = new Map<string, ReportRow>();
  phases.forEach((p, i) => {
    const d = p.detail as Detail;
    const row = rows[i];
    if (!d.measurement || !row) return;
    if (!d.condition) baselines.set(d.measurement.id, row);
    else if (d.condition.baseline && row.status === 'succeeded')
      adjacent.set(`${d.condition.group}/${d.measurement.id}`, row);
  });
  phases.forEach((p, i) => {
    const d = p.detail as Detail;
    const c = d.condition;
    if (!c) return;
    if (c.action) {
      steps.push({
        condition: p.name.replace(/^(apply|revert) /, ''),
        group: c.group,
        action: c.action,
        status: p.state,
        how: d.evidence?.how ?? p.error,
        enforcementMs: d.evidence?.enforcementMs ?? null,
        apiMs: d.evidence?.apiMs ?? null,
        policies: c.request?.policies ?? null,
      });
      return;
    }
    const row = rows[i];
    if (!row || !d.measurement || c.baseline) return;
    const paired = adjacent.get(`${c.group}/${d.measurement.id}`);
    const base = paired ?? baselines.get(d.measurement.id);
    const cand = rateOf(row);
    const b = base ? rateOf(base) : undefined;
    let change: number | null = null;
    let verdict: Verdict | null = null;
    let reason = '';
    let baselineCi95: [number, number] | null = null;
    let valueCi95: [number, number] | null = null;
    if (cand.value !== null && b?.value) {
      change = cand.value / b.value - 1;
      if (cand.rounds.length && b.rounds.length) {
        const cmp = compareRounds(b.rounds, cand.rounds, { higherIsBetter: cand.higherIsBetter });
        verdict = cmp.verdict;
        reason = cmp.reason;
        baselineCi95 = cmp.baseline.ci95;
        valueCi95 = cmp.candidate.ci95;
      }
    }
    out.push({
      condition: c.label ?? c.group,
      group: c.group,
      measurementId: d.measurement.id,
      measurement: row.measurement.replace(/ \[.*\]$/, ''),
      baselineFrom: paired ? 'adjacent' : 'run',
      unit: cand.unit || b?.unit || '',
      baseline: b?.value ?? null,
      value: cand.value,
      change,
      verdict,
      reason,
      baselineCi95,
      valueCi95,
      error: row.status === 'succeeded' ? '' : row.error || row.status,
    });
  });
  return steps.length || out.length ? { steps, rows: out } : undefined;
}
