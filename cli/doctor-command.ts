/**
 * `cni-bench doctor [--json]`: the agent's preflight. Checks every binary in
 * agent/tools/requirements.ts on PATH with its version, prints a table (or
 * JSON), and exits 1 when a required one is missing, so an image or node that
 * cannot measure fails before a run instead of halfway through one.
 */
import { parseArgs } from 'node:util';
import { checkRequirements, type RequirementCheck } from '../agent/index.js';
import { CniBenchError, ErrorCodes } from '../core/errors.js';

export const DOCTOR_USAGE = '  cni-bench doctor [--json]    check the tools the agent needs on this PATH (exit 1: a required one is missing)\n';

export interface DoctorReport {
  ok: boolean;
  missingRequired: string[];
  missingOptional: string[];
  tools: RequirementCheck[];
}

export function doctorReport(tools: RequirementCheck[]): DoctorReport {
  const missing = (required: boolean): string[] => tools.filter((t) => !t.found && t.required === required).map((t) => t.binary);
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

function parse(args: string[]): { json: boolean } {
  try {
    return parseArgs({ args, strict: true, options: { json: { type: 'boolean', default: false } } }).values;
  } catch (err) {
    throw new CniBenchError(ErrorCodes.VALIDATION, `arguments: ${(err as Error).message}`, { cause: err, details: { field: 'arguments' } });
  }
}

/** Writes the report to io.stdout; returns 0, or 1 when a required tool is missing. */
export async function doctorCommand(args: string[], io: { stdout: (s: string) => void; pathEnv?: string }): Promise<number> {
  const { json } = parse(args);
  const report = doctorReport(await checkRequirements(io.pathEnv ?? process.env.PATH ?? ''));
  io.stdout(json ? `${JSON.stringify(report, null, 2)}\n` : renderDoctorTable(report));
  return report.ok ? 0 : 1;
}
