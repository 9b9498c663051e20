/**
 * Listening TCP ports from /proc/net/tcp or /proc/net/tcp6 (state 0A is
 * LISTEN). Pure; a malformed table is an error, an empty one is no listeners.
 */
import { parseError } from '../../core/errors.js';

export function parseListeningPorts(text: string): Set<number> {
  const lines = text.split('\n').filter((l) => l.trim());
  const ports = new Set<number>();
  if (lines.length === 0) return ports;
  if (!/^\s*sl\s+local_address/.test(lines[0] ?? '')) throw parseError('/proc/net/tcp', text, 'no header line');
  for (const line of lines.slice(1)) {
    const f = line.trim().split(/\s+/);
    const local = /^[0-9A-F]+:([0-9A-F]{4})$/i.exec(f[1] ?? '');
    if (!local || !/^[0-9A-F]{2}$/i.test(f[3] ?? ''))
      throw parseError('/proc/net/tcp', text, `bad line ${JSON.stringify(line.slice(0, 80))}`);
    if ((f[3] ?? '').toUpperCase() === '0A') ports.add(parseInt(local[1] ?? '', 16));
  }
  return ports;
}
