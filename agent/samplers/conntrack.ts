/** Pure readers for conntrack fill: `conntrack -C` and `sysctl -n <name>`. */
import { parseError } from '../../core/errors.js';

function wholeNumber(tool: string, stdout: string): number {
  const t = stdout.trim();
  if (!/^\d+$/.test(t)) throw parseError(tool, stdout, 'expected one whole number');
  return Number(t);
}

export function parseConntrackCount(stdout: string): number {
  return wholeNumber('conntrack', stdout);
}

export function parseSysctlNumber(name: string, stdout: string): number {
  return wholeNumber(`sysctl ${name}`, stdout);
}
