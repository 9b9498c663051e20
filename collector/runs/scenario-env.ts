/**
 * The reference script's knobs, accepted as environment overrides of a
 * scenario so its users keep their habits: IPERF_DURATION (throughput
 * measurements), FORTIO_DURATION (HTTP and request/response measurements),
 * ROUNDS and ROUND_SLEEP. An override beats the scenario's own value; a bad
 * value is refused naming the variable. Pure: the caller passes the environment.
 */
import { type FieldIssue, validationError } from '../../core/errors.js';

export interface EnvOverrides {
  throughputDurationSeconds?: number;
  loadDurationSeconds?: number;
  rounds?: number;
  roundSleepSeconds?: number;
}

/** [variable, field, min, integer, max]: the same bounds as the scenario schema's fields. */
const KNOBS = [
  ['IPERF_DURATION', 'throughputDurationSeconds', 0, false, 3600],
  ['FORTIO_DURATION', 'loadDurationSeconds', 0, false, 3600],
  ['ROUNDS', 'rounds', 1, true, 100],
  ['ROUND_SLEEP', 'roundSleepSeconds', 0, false, 600],
] as const;

export function envOverrides(env: Readonly<Record<string, string | undefined>>): EnvOverrides {
  const out: EnvOverrides = {};
  const issues: FieldIssue[] = [];
  for (const [name, key, min, integer, max] of KNOBS) {
    const text = env[name];
    if (text === undefined || text.trim() === '') continue;
    // The study's script takes plain seconds; "10s" is accepted too.
    const v = Number(text.trim().replace(/s$/, ''));
    const ok =
      Number.isFinite(v) &&
      (integer
        ? Number.isInteger(v) && v >= min
        : key.endsWith('Seconds') && key !== 'roundSleepSeconds'
          ? v > min
          : v >= min);
    if (!ok || v > max)
      issues.push({
        path: `env ${name}`,
        message: `must be ${integer ? 'an integer' : 'a number of seconds'} ${key === 'rounds' ? '>= 1' : key === 'roundSleepSeconds' ? '>= 0' : '> 0'} and at most ${max}, got '${text}'`,
      });
    else out[key] = v;
  }
  if (issues.length) throw validationError(issues, 'environment');
  return out;
}
