/**
 * A scenario file as an object, in JSON or YAML (by extension: .yaml/.yml is
 * YAML, anything else JSON). The same object then goes through the one
 * scenario schema (collector/runs/scenario.ts), whose JSON Schema is
 * published in docs/scenario.schema.json for editors.
 */
import { readFile, stat } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { CniBenchError, ErrorCodes } from '../core/errors.js';

const MAX_SCENARIO_BYTES = 1024 * 1024;

export function isYamlPath(path: string): boolean {
  return /\.ya?ml$/i.test(path);
}

/** Parses the text of a scenario file; errors name `field` and the path, with the parser's line and column. */
export function parseScenarioText(text: string, path: string, field = 'scenario'): Record<string, unknown> {
  const bad = (why: string, cause?: unknown): CniBenchError =>
    new CniBenchError(ErrorCodes.VALIDATION, `--${field}: '${path}' ${why}`, { cause, details: { field } });
  const yaml = isYamlPath(path);
  let parsed: unknown;
  try {
    // One document only; aliases capped (a "billion laughs" file is refused, not expanded).
    parsed = yaml ? parseYaml(text, { maxAliasCount: 100, uniqueKeys: true }) : JSON.parse(text);
  } catch (err) {
    throw bad(`is not valid ${yaml ? 'YAML' : 'JSON'} (${(err as Error).message.split('\n')[0]?.slice(0, 200)})`, err);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw bad(`must hold a ${yaml ? 'YAML mapping' : 'JSON object'}`);
  return parsed as Record<string, unknown>;
}

/** A regular file of at most 1 MiB holding a JSON object or a YAML mapping; errors name --scenario and the path. */
export async function readScenarioFile(path: string, field = 'scenario'): Promise<Record<string, unknown>> {
  const bad = (why: string, cause?: unknown): CniBenchError =>
    new CniBenchError(ErrorCodes.VALIDATION, `--${field}: '${path}' ${why}`, { cause, details: { field } });
  const st = await stat(path).catch((err: NodeJS.ErrnoException) => {
    throw bad(`cannot be read (${err.code ?? err.message})`, err);
  });
  if (!st.isFile()) throw bad('is not a regular file');
  if (st.size > MAX_SCENARIO_BYTES) throw bad(`is larger than ${MAX_SCENARIO_BYTES} bytes`);
  return parseScenarioText(await readFile(path, 'utf8'), path, field);
}
