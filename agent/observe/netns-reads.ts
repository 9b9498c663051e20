/**
 * What a network namespace says about TCP: the `Tcp:` counters of
 * /proc/net/snmp, the socket counts of /proc/net/sockstat, the sysctls that
 * bound short-connection load (ip_local_port_range, tcp_tw_reuse) and the
 * speed of the link a route leaves by. Parsers are pure and tested on
 * captures in test/fixtures/observe/; the readers below them are a few lines each.
 *
 * Which namespace a file shows differs by file, which is why there are three
 * kinds of reader:
 * - /proc/<pid>/net/* shows the namespace of <pid> (only while it lives);
 * - /proc/sys/net/* shows the namespace of the READER, so another namespace's
 *   sysctls are read by `nsenter --net=<path> cat ...`;
 * - /sys/class/net shows the namespace of whoever MOUNTED sysfs, which is
 *   often neither (see readLinkSpeedMbps).
 */
import { readdir, readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { parseError } from '../../core/errors.js';
import { netnsAt, runInNetns } from '../../core/netns.js';

export interface SnmpTcp {
  activeOpens: number;
  passiveOpens: number;
  attemptFails: number;
  estabResets: number;
  currEstab: number;
  inSegs: number;
  outSegs: number;
  retransSegs: number;
  inErrs: number;
  outRsts: number;
  /** Every field of the `Tcp:` pair by its kernel name (MaxConn is -1: signed). */
  fields: Readonly<Record<string, number>>;
}

export interface Sockstat {
  socketsUsed: number;
  /** Per network namespace. */
  tcpInUse: number;
  /** Per network namespace since Linux 4.x (the netns's tcp_death_row); IPv4 and IPv6 together. */
  tcpTimeWait: number;
  /** Host-wide, whatever the namespace: orphans, allocated sockets, memory in pages. */
  tcpOrphan: number;
  tcpAlloc: number;
  tcpMemPages: number;
}

const SNMP = '/proc/net/snmp';
const SOCKSTAT = '/proc/net/sockstat';
const PORT_RANGE = 'net.ipv4.ip_local_port_range';
const TW_REUSE = 'net.ipv4.tcp_tw_reuse';
const SNMP_REQUIRED = [
  'ActiveOpens',
  'PassiveOpens',
  'AttemptFails',
  'EstabResets',
  'CurrEstab',
  'InSegs',
  'OutSegs',
  'RetransSegs',
  'InErrs',
  'OutRsts',
] as const;
const SOCKSTAT_TCP = ['inuse', 'orphan', 'tw', 'alloc', 'mem'] as const;

/**
 * The `Tcp:` header/value line pair of /proc/net/snmp. The value line must end
 * in a newline (the kernel always writes one, and more lines follow), so a cut
 * inside the last number is an error, never a smaller counter.
 */
export function parseSnmpTcp(text: string): SnmpTcp {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith('Tcp:'));
  if (at < 0) throw parseError(SNMP, text, 'no "Tcp:" header line');
  const header = (lines[at] ?? '').split(/\s+/).slice(1);
  if (at + 2 > lines.length - 1 || !(lines[at + 1] ?? '').startsWith('Tcp:'))
    throw parseError(SNMP, text, 'no complete "Tcp:" value line after the header (truncated?)');
  const values = (lines[at + 1] ?? '').trim().split(/\s+/).slice(1);
  if (values.length !== header.length)
    throw parseError(SNMP, text, `Tcp: ${header.length} names but ${values.length} values`);
  const fields: Record<string, number> = {};
  header.forEach((name, i) => {
    const v = values[i] ?? '';
    if (!/^-?\d+$/.test(v)) throw parseError(SNMP, text, `Tcp ${name} ${JSON.stringify(v)} is not a whole number`);
    fields[name] = Number(v);
  });
  const missing = SNMP_REQUIRED.filter((n) => !(n in fields));
  if (missing.length > 0) throw parseError(SNMP, text, `Tcp: no ${missing.join(', ')}`);
  const f = (n: (typeof SNMP_REQUIRED)[number]): number => fields[n] as number;
  return {
    activeOpens: f('ActiveOpens'),
    passiveOpens: f('PassiveOpens'),
    attemptFails: f('AttemptFails'),
    estabResets: f('EstabResets'),
    currEstab: f('CurrEstab'),
    inSegs: f('InSegs'),
    outSegs: f('OutSegs'),
    retransSegs: f('RetransSegs'),
    inErrs: f('InErrs'),
    outRsts: f('OutRsts'),
    fields: Object.freeze(fields),
  };
}

/**
 * /proc/net/sockstat. Its `tw` is the cheap way to count TIME_WAIT: one short
 * read instead of walking /proc/net/tcp{,6}, which holds one line per socket
 * and grows to megabytes under short-connection load. The TCP line must be
 * newline-terminated and carry all five counters.
 */
export function parseSockstat(text: string): Sockstat {
  const lines = text.split('\n');
  const pairs = (prefix: string): Map<string, string> | undefined => {
    const at = lines.findIndex((l) => l.startsWith(prefix));
    if (at < 0 || at === lines.length - 1) return undefined;
    const words = (lines[at] ?? '').slice(prefix.length).trim().split(/\s+/);
    const m = new Map<string, string>();
    for (let i = 0; i + 1 < words.length; i += 2) m.set(words[i] ?? '', words[i + 1] ?? '');
    return m;
  };
  const num = (m: Map<string, string>, line: string, key: string): number => {
    const v = m.get(key);
    if (v === undefined || !/^\d+$/.test(v))
      throw parseError(
        SOCKSTAT,
        text,
        `${line} ${key} ${JSON.stringify(v ?? null)} is not a whole number (truncated?)`,
      );
    return Number(v);
  };
  const sockets = pairs('sockets:');
  if (!sockets) throw parseError(SOCKSTAT, text, 'no complete "sockets:" line');
  const tcp = pairs('TCP:');
  if (!tcp) throw parseError(SOCKSTAT, text, 'no complete "TCP:" line (truncated?)');
  const [inuse, orphan, tw, alloc, mem] = SOCKSTAT_TCP.map((k) => num(tcp, 'TCP', k)) as [
    number,
    number,
    number,
    number,
    number,
  ];
  return {
    socketsUsed: num(sockets, 'sockets', 'used'),
    tcpInUse: inuse,
    tcpOrphan: orphan,
    tcpTimeWait: tw,
    tcpAlloc: alloc,
    tcpMemPages: mem,
  };
}

/**
 * Ports in ip_local_port_range ("low<TAB>high"): how many connections to one
 * server address and port a client namespace can hold, TIME_WAIT included.
 */
export function parsePortRange(text: string): number {
  const m = /^(\d+)\s+(\d+)\n?$/.exec(text);
  if (!m) throw parseError(PORT_RANGE, text, 'expected "<low> <high>"');
  const low = Number(m[1]);
  const high = Number(m[2]);
  if (low < 1 || high > 65535 || low > high)
    throw parseError(PORT_RANGE, text, `range ${low}-${high} is not within 1-65535 with low <= high`);
  return high - low + 1;
}

/**
 * tcp_tw_reuse: 0 off, 1 on, 2 (the default since Linux 4.19) on for loopback
 * only. Only 1 lets a client reuse TIME_WAIT ports towards another host.
 */
export function parseTcpTwReuse(text: string): 0 | 1 | 2 {
  const m = /^([012])\n?$/.exec(text);
  if (!m) throw parseError(TW_REUSE, text, 'expected 0, 1 or 2');
  return Number(m[1]) as 0 | 1 | 2;
}

/** /sys/class/net/<dev>/speed in Mbit/s; -1 (and the u32 form of it on old kernels) means the driver does not know: 0. */
export function parseLinkSpeed(text: string): number {
  const m = /^(-?\d+)\n?$/.exec(text);
  if (!m) throw parseError('/sys/class/net/<dev>/speed', text, 'expected a whole number of Mbit/s');
  const v = Number(m[1]);
  return v > 0 && v !== 0xffffffff ? v : 0;
}

/** The `dev` of the first route in `ip -j route get|show` output; undefined when there is no route. */
export function parseRouteDev(json: string): string | undefined {
  const routes = parseJsonArray<{ dev?: unknown }>('ip -j route', json);
  for (const r of routes) if (typeof r?.dev === 'string') return r.dev;
  if (routes.length > 0) throw parseError('ip -j route', json, 'routes without a "dev"');
  return undefined;
}

export interface IpLink {
  ifindex: number;
  ifname: string;
  /** linkinfo.info_kind (veth, bridge, vxlan, ifb, bond, ...); absent for plain hardware and lo. */
  kind: string | undefined;
  /** The bus of the device behind the interface (pci, virtio, ...); absent for software devices. */
  parentBus: string | undefined;
}

/** `ip -j -d link show`: one entry per interface. */
export function parseIpLinks(json: string): IpLink[] {
  return parseJsonArray<{
    ifindex?: unknown;
    ifname?: unknown;
    linkinfo?: { info_kind?: unknown };
    parentbus?: unknown;
  }>('ip -j -d link show', json).map((l) => {
    if (typeof l?.ifindex !== 'number' || typeof l?.ifname !== 'string')
      throw parseError('ip -j -d link show', json, 'an entry without ifindex and ifname');
    const kind = l.linkinfo?.info_kind;
    return {
      ifindex: l.ifindex,
      ifname: l.ifname,
      kind: typeof kind === 'string' ? kind : undefined,
      parentBus: typeof l.parentbus === 'string' ? l.parentbus : undefined,
    };
  });
}

function parseJsonArray<T>(tool: string, json: string): (T | null | undefined)[] {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw parseError(tool, json, 'not JSON (truncated?)');
  }
  if (!Array.isArray(v)) throw parseError(tool, json, 'not a JSON array');
  return v as (T | null | undefined)[];
}

/** Where a read looks: a live pid's namespace, a namespace file (nsenter), or (neither) the agent's own. */
export interface NetnsTarget {
  pid?: number;
  netnsPath?: string;
}

/** /proc/net/<name> of the target's network namespace. */
export async function readNetProcFile(name: 'snmp' | 'sockstat', where: NetnsTarget = {}): Promise<string> {
  if (where.pid !== undefined) return readFile(`/proc/${where.pid}/net/${name}`, 'utf8');
  if (where.netnsPath)
    return (await runInNetns(netnsAt(where.netnsPath), 'probe', 'cat', [`/proc/net/${name}`])).stdout;
  return readFile(`/proc/self/net/${name}`, 'utf8');
}

/** A /proc/sys/net sysctl (like "ipv4/tcp_tw_reuse") as a reader inside `netnsPath` (or the agent) sees it. */
export async function readNetSysctl(rel: string, netnsPath?: string): Promise<string> {
  const path = `/proc/sys/net/${rel}`;
  if (!netnsPath) return readFile(path, 'utf8');
  return (await runInNetns(netnsAt(netnsPath), 'probe', 'cat', [path])).stdout;
}

export const readSnmpTcp = async (where: NetnsTarget = {}): Promise<SnmpTcp> =>
  parseSnmpTcp(await readNetProcFile('snmp', where));
export const readSockstat = async (where: NetnsTarget = {}): Promise<Sockstat> =>
  parseSockstat(await readNetProcFile('sockstat', where));
export const readPortRange = async (netnsPath?: string): Promise<number> =>
  parsePortRange(await readNetSysctl('ipv4/ip_local_port_range', netnsPath));
export const readTcpTwReuse = async (netnsPath?: string): Promise<0 | 1 | 2> =>
  parseTcpTwReuse(await readNetSysctl('ipv4/tcp_tw_reuse', netnsPath));

export interface LinkSpeed {
  /** Mbit/s; 0 = unknown. */
  mbps: number;
  device: string | undefined;
  /** Why the speed is unknown, when it is. */
  reason: string | undefined;
}

/**
 * Speed of the interface the route to `targetHost` (an IP; else the default
 * route) leaves by, in the namespace at `netnsPath` (else the agent's).
 * The device and its kind come from netlink (`ip -j`), which always answers
 * for the namespace it runs in. A device with a link kind (veth, bridge,
 * vxlan, bond, ...) or without a bus behind it (lo, software devices) counts
 * as unknown: its "speed" is a made-up constant or a sum, never what the wire
 * carries. The speed itself is only in sysfs, which shows the namespace of
 * whoever mounted it; it is read only if /sys/class/net lists exactly the
 * namespace's interfaces (same names, same ifindexes), otherwise unknown.
 */
export async function readLinkSpeedMbps(opts: { netnsPath?: string; targetHost?: string } = {}): Promise<LinkSpeed> {
  const ip = async (args: string[]): Promise<string> =>
    (await runInNetns(netnsAt(opts.netnsPath), 'probe', 'ip', args)).stdout;
  const host = opts.targetHost && isIP(opts.targetHost) ? opts.targetHost : undefined;
  const device = parseRouteDev(await ip(host ? ['-j', 'route', 'get', host] : ['-j', 'route', 'show', 'default']));
  const unknown = (reason: string): LinkSpeed => ({ mbps: 0, device, reason });
  if (device === undefined) return unknown('no default route');
  const links = parseIpLinks(await ip(['-j', '-d', 'link', 'show']));
  const link = links.find((l) => l.ifname === device);
  if (!link) return unknown(`route device ${device} not in ip link show`);
  if (link.kind !== undefined) return unknown(`${device} is a ${link.kind} device`);
  if (link.parentBus === undefined) return unknown(`${device} is a software device`);
  const sysfs = await readSysfsIndexes();
  const same = sysfs.size === links.length && links.every((l) => sysfs.get(l.ifname) === l.ifindex);
  if (!same) return unknown(`/sys/class/net belongs to another network namespace than ${device}'s`);
  let text: string;
  try {
    text = await readFile(`/sys/class/net/${device}/speed`, 'utf8');
  } catch (err) {
    // EINVAL: the driver has no speed to give (link down, or it never reports one).
    return unknown(`${device}: speed unreadable (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const mbps = parseLinkSpeed(text);
  return mbps > 0 ? { mbps, device, reason: undefined } : unknown(`${device}: the driver reports no speed`);
}

async function readSysfsIndexes(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const name of await readdir('/sys/class/net')) {
    // Entries without an ifindex (bonding_masters is a plain file) are not interfaces.
    const text = await readFile(`/sys/class/net/${name}/ifindex`, 'utf8').catch(() => '');
    if (/^\d+\n?$/.test(text)) out.set(name, Number(text));
  }
  return out;
}
