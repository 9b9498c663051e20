/** The overhead table as Markdown: how each condition was verified, then every measurement beside its baseline. Pure. */
import type { ConditionsTable } from './conditions.js';
import { mdText } from './escape.js';

function num(v: number | null, unit: string): string {
  if (v === null) return '—';
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${unit}`.trim();
}

function change(c: number | null): string {
  return c === null ? '—' : `${c >= 0 ? '+' : ''}${(c * 100).toFixed(1)}%`;
}

export function renderConditions(t: ConditionsTable): string[] {
  return [
    '## Overhead conditions',
    '',
    "Each condition was applied, verified in the dataplane and reverted (revert verified too); a condition that could not be verified has no numbers, only the reason. Each is compared with its own baseline, measured right before its group was applied (the run's first baseline only where that one failed).",
    '',
    '| step | status | enforcement | API | how verified (or why not) |',
    '|---|---|---:|---:|---|',
    ...t.steps.map(
      (s) =>
        `| ${s.action} ${mdText(s.condition)} | ${mdText(s.status)} | ${s.enforcementMs === null ? '—' : `${s.enforcementMs} ms`} | ${s.apiMs === null ? '—' : `${s.apiMs} ms`} | ${mdText(s.how)} |`,
    ),
    '',
    '| measurement | condition | baseline | under condition | change | verdict |',
    '|---|---|---:|---:|---:|---|',
    ...t.rows.map(
      (r) =>
        `| ${mdText(r.measurement)} | ${mdText(r.condition)} | ${num(r.baseline, r.unit)} | ${r.error ? `— (${mdText(r.error)})` : num(r.value, r.unit)} | ${change(r.change)} | ${r.verdict ? `${r.verdict}${r.reason ? ` (${mdText(r.reason)})` : ''}` : '—'} |`,
    ),
    ...(t.rows.some((r) => r.group === 'policyCount' && r.condition === '0 policies' && r.value !== null)
      ? [
          '',
          "The 0 policies step measures the baseline's dataplane again, after the pods were relabelled and the enforcer had settled: its change is what drift alone (machine load, warm-up) did here, and a condition's change no larger than that cannot be put down to the condition.",
        ]
      : []),
  ];
}
