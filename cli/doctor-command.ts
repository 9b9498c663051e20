/**
 * `cni-bench doctor [--json]`: the agent's preflight. Checks every binary in
 * agent/tools/requirements.ts on PATH with its version, prints a table (or
 * JSON), and exits 1 when a required one is missing, so an image or node that
 * cannot measure fails before a run instead of halfway through one.
 */
import { checkRequirements, type RequirementCheck } from '../agent/index.js';
import { switchFlag } from '../core/flags.js';
import { defineCommand } from './command.js';

export interface DoctorReport {
  ok: boolean;
  missingRequired: string[];
  missingOptional: string[];
  tools: RequirementCheck[];
}

export function doctorReport(tools: RequirementCheck[]): DoctorReport {
  const missing = (required: boolean): string[] =>
    tools.filter((t) => !t.found && t.required === required).map((t) => t.binary);
  const missingRequired = missing(true);
  return { ok: missingRequired.length === 0, missingRequired, missingOptional: missing(false), tools };
}

/** The table a person reads: where a tool is found its path, where it is missing what is lost. */
export function renderDoctorTable(report: DoctorReport): string {
  const rows = report.tools.map((t) => [
    t.binary,
    t.required ? 'required' : 'optional',
    t.found ? 'found' : 'MISSING',
    t.version ?? (t.found ? 'unknown' : '-'),
    t.found ? (t.path ?? '') + (t.error ? ` (${t.error.split('\n')[0]})` : '') : t.why,
  ]);
  const all = [['tool', 'need', 'status', 'version', 'path, or what is lost'], ...rows];
  const widths = all[0]!.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const lines = all.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
  const summary = report.ok
    ? `doctor: every required tool found${report.missingOptional.length ? `; optional missing: ${report.missingOptional.join(', ')}` : ''}`
    : `doctor: required missing: ${report.missingRequired.join(', ')}`;
  return `${lines.join('\n')}\n${summary}\n`;
}

async function doctor(json: boolean, stdout: (s: string) => void, pathEnv: string): Promise<number> {
  const report = doctorReport(await checkRequirements(pathEnv));
  stdout(json ? `${JSON.stringify(report, null, 2)}\n` : renderDoctorTable(report));
  return report.ok ? 0 : 1;
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench doctor',
    summary:
      'Checks every tool the agent runs on this PATH, with its version, and says what is lost where an optional one is missing.',
    flags: { json: switchFlag({ help: 'print the checks as JSON' }) },
    env: [{ name: 'PATH', help: 'where the tools are looked for' }],
    examples: ['cni-bench doctor', 'cni-bench doctor --json | jq .missingOptional'],
    notes: ['Exit codes: 0 every required tool found, 1 a required one is missing, 2 bad flags.'],
  },
  run: (values, _positionals, ctx) => doctor(values.json, ctx.stdout, ctx.env.PATH ?? ''),
});
