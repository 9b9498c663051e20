/**
 * The kernel's own account of refused and retried connections, per network
 * namespace: selected `Tcp:` counters of /proc/net/snmp and `TcpExt:` counters
 * of /proc/net/netstat, named as nstat names them (TcpActiveOpens,
 * TcpExtPAWSTimewait). Read at a round's boundaries in the client's and the
 * server's namespaces, their differences show SYNs that a TIME_WAIT socket
 * refused (PAWS), SYNs the client had to send again (one second each), and
 * listen queues that overflowed; see core/guards.ts (connections-refused) and
 * docs/findings/service-short-connection-artifact.md. The parser is pure and
 * tested on captures in test/fixtures/observe/.
 */
import { readFile } from 'node:fs/promises';
import { parseError } from '../../core/errors.js';

/** Counters a sample carries (nstat names). Cumulative since the namespace was created. */
export const TCP_COUNTERS = [
  'TcpActiveOpens',
  'TcpPassiveOpens',
  'TcpAttemptFails',
  'TcpEstabResets',
  'TcpRetransSegs',
  'TcpOutRsts',
  'TcpExtTCPSynRetrans',
  'TcpExtTCPTimeouts',
  'TcpExtPAWSTimewait',
  'TcpExtPAWSEstab',
  'TcpExtTWRecycled',
  'TcpExtTW',
  'TcpExtTCPChallengeACK',
  'TcpExtTCPSYNChallenge',
  'TcpExtListenOverflows',
  'TcpExtListenDrops',
  'TcpExtTCPReqQFullDrop',
  'TcpExtTCPBacklogDrop',
] as const;

export type TcpCounterName = (typeof TCP_COUNTERS)[number];

/**
 * Every header/value line pair with one of `prefixes` (e.g. "Tcp:" and
 * "TcpExt:") in a /proc/net/snmp or /proc/net/netstat text, as nstat names.
 * Each value line must end in a newline: a cut inside the last number is an
 * error naming the file, never a smaller counter.
 */
export function parseProcNetPairs(file: string, text: string, prefixes: readonly string[]): Record<string, number> {
  const lines = text.split('\n');
  const out: Record<string, number> = {};
  for (const prefix of prefixes) {
    const at = lines.findIndex((l) => l.startsWith(`${prefix}:`) && !/^\S+:\s+-?\d/.test(l));
    if (at < 0) throw parseError(file, text, `no "${prefix}:" header line`);
    const values = lines[at + 1];
    if (values === undefined || at + 1 >= lines.length - 1 || !values.startsWith(`${prefix}:`))
      throw parseError(file, text, `no complete "${prefix}:" value line after the header (truncated?)`);
    const names = (lines[at] ?? '').trim().split(/\s+/).slice(1);
    const nums = values.trim().split(/\s+/).slice(1);
    if (names.length !== nums.length)
      throw parseError(file, text, `${prefix}: ${names.length} names but ${nums.length} values`);
    names.forEach((name, i) => {
      const v = nums[i] ?? '';
      if (!/^-?\d+$/.test(v))
        throw parseError(file, text, `${prefix} ${name} ${JSON.stringify(v)} is not a whole number`);
      out[`${prefix}${name}`] = Number(v);
    });
  }
  return out;
}

/** The TCP_COUNTERS of one namespace from its snmp and netstat texts; a counter this kernel lacks is left out (never 0). */
export function tcpCountersOf(snmp: string, netstat: string): Record<string, number> {
  const all = {
    ...parseProcNetPairs('/proc/net/snmp', snmp, ['Tcp']),
    ...parseProcNetPairs('/proc/net/netstat', netstat, ['TcpExt']),
  };
  const out: Record<string, number> = {};
  for (const k of TCP_COUNTERS) if (all[k] !== undefined && all[k] >= 0) out[k] = all[k];
  return out;
}

/** Reads the counters of the namespace whose /proc/<pid>/net directory is `procNet`. */
export async function readTcpCounters(procNet: string): Promise<Record<string, number>> {
  const [snmp, netstat] = await Promise.all([
    readFile(`${procNet}/snmp`, 'utf8'),
    readFile(`${procNet}/netstat`, 'utf8'),
  ]);
  return tcpCountersOf(snmp, netstat);
}
