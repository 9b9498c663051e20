/**
 * Path MTU of one path, measured with don't-fragment probes: `ping -M do -s
 * <payload> -c 1` from the client's namespace to the far end, sizes searched
 * between a floor and the local interface's MTU. What each size got tells the
 * story: a reply (fits); an ICMP "fragmentation needed" from a hop, or the
 * kernel's own "message too long" once such an ICMP has lowered its cached PMTU
 * (the path said so: not a black hole); or silence (dropped without a word). A
 * path whose largest working size is below what the client may send, where the
 * next size up is dropped silently, is a PMTU black hole: TCP there stalls on
 * full-size segments until a timeout, which overlays are known to cause when
 * something filters ICMP. Parsing and the search are pure; the runner is a few
 * lines at the end.
 */
import { asCniBenchError, CniBenchError, ErrorCodes, parseError } from '../../core/errors.js';
import { netnsAt, runInNetns } from '../../core/netns.js';
import type { PathMtu } from '../../gen/cnibench/v1/agent.js';

export type DfOutcome =
  | { kind: 'reply' }
  /** A hop sent ICMP fragmentation-needed (`from`), or the kernel refused locally from its cached PMTU. */
  | { kind: 'too-big'; mtu: number; from?: string }
  | { kind: 'silent' };

/** IPv4 and ICMP headers on top of ping's payload. */
export const PING_OVERHEAD = 28;

/** Pure: one `ping -M do -c 1` run (iputils) as an outcome; anything else is an error naming ping. */
export function parsePingDf(stdout: string, stderr: string): DfOutcome {
  const stats = /(\d+) packets transmitted, (\d+) received/.exec(stdout);
  if (!stats) throw parseError('ping', `${stdout}\n${stderr}`, 'no "packets transmitted" line (truncated?)');
  if (Number(stats[2]) > 0) return { kind: 'reply' };
  const hop = /From (\S+) icmp_seq=\d+ Frag needed and DF set \(mtu = (\d+)\)/.exec(stdout);
  if (hop) return { kind: 'too-big', mtu: Number(hop[2]), from: hop[1] as string };
  const local = /local error: message too long, mtu=(\d+)/.exec(stderr);
  if (local) return { kind: 'too-big', mtu: Number(local[1]) };
  const unreachable = /From (\S+) icmp_seq=\d+ (Destination [\w ]*Unreachable)/.exec(stdout);
  if (unreachable)
    throw new CniBenchError(
      ErrorCodes.TOOL_FAILED,
      `ping: ${unreachable[2]} from ${unreachable[1]}: the target answers no ping (a Service address does not; its path is its backends')`,
      { details: { tool: 'ping' } },
    );
  if (/\+\d+ errors/.test(stdout))
    throw parseError('ping', `${stdout}\n${stderr}`, 'an error other than fragmentation-needed');
  return { kind: 'silent' };
}

export interface PmtuResult {
  /** Largest IP packet that got a reply (payload + 28). */
  effectiveMtu: number;
  /** What the client may send (its interface MTU). */
  localMtu: number;
  /** Larger packets dropped without any ICMP error. */
  blackHole: boolean;
  /** The MTU a hop or the kernel announced, when one did. */
  announcedMtu?: number;
  /** The hop that announced it (absent: the client's own kernel). */
  announcedFrom?: string;
  /** Each size probed and what it got, in order. */
  probes: { size: number; outcome: DfOutcome['kind'] }[];
}

/**
 * Pure given `probe`: binary search for the largest packet size (IP bytes)
 * in [floor, localMtu] that gets a reply; a silent size is tried `silentTries`
 * times before it counts as silent (one lost probe is not a black hole).
 */
export async function searchPmtu(
  probe: (packetBytes: number) => Promise<DfOutcome>,
  localMtu: number,
  floor = 576,
  silentTries = 2,
): Promise<PmtuResult> {
  const probes: PmtuResult['probes'] = [];
  let announced: number | undefined;
  let announcedFrom: string | undefined;
  let silentAbove = false;
  const tryOnce = async (size: number): Promise<DfOutcome> => {
    let o = await probe(size);
    for (let i = 1; o.kind === 'silent' && i < silentTries; i++) o = await probe(size);
    probes.push({ size, outcome: o.kind });
    if (o.kind === 'too-big') {
      announced = o.mtu;
      announcedFrom = o.from;
    }
    return o;
  };
  if ((await tryOnce(floor)).kind !== 'reply')
    throw parseError('ping', `size ${floor}`, `no reply even at ${floor} bytes: the path is down, not narrow`);
  let lo = floor;
  let hi = localMtu + 1;
  // Invariant: lo gets a reply, hi does not (or is past the local MTU).
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    const o = await tryOnce(mid);
    if (o.kind === 'reply') lo = mid;
    else {
      hi = mid;
      if (o.kind === 'silent') silentAbove = true;
    }
  }
  // The size just above the largest that worked decides: silence there, with room left locally, is a black hole.
  const next = probes.filter((p) => p.size === lo + 1).at(-1);
  const blackHole = lo < localMtu && (next ? next.outcome === 'silent' : silentAbove);
  return {
    effectiveMtu: lo,
    localMtu,
    blackHole,
    ...(announced !== undefined ? { announcedMtu: announced } : {}),
    ...(announcedFrom !== undefined ? { announcedFrom } : {}),
    probes,
  };
}

/** Probes `target` from the namespace at `netnsPath` ('' = this one) with ping's DF mode. */
export async function probePathMtu(netnsPath: string, target: string, localMtu: number): Promise<PmtuResult> {
  return searchPmtu(async (bytes) => {
    const r = await runInNetns(
      netnsAt(netnsPath),
      'probe',
      'ping',
      ['-n', '-M', 'do', '-s', String(bytes - PING_OVERHEAD), '-c', '1', '-W', '1', target],
      { okExitCodes: [0, 1] },
    );
    return parsePingDf(r.stdout, r.stderr);
  }, localMtu);
}

/** Pure: the device of `ip -o route get <target>` (one line; `dev X`), an error naming ip otherwise. */
export function parseRouteDev(stdout: string): string {
  const m = /\bdev (\S+)/.exec(stdout);
  if (!m) throw parseError('ip', stdout, 'no "dev" in ip route get (no route to the target?)');
  return m[1] as string;
}

/** Pure: the MTU of `ip -o link show dev X`, an error naming ip otherwise. */
export function parseLinkMtu(stdout: string): number {
  const m = /\bmtu (\d+)\b/.exec(stdout);
  if (!m) throw parseError('ip', stdout, 'no "mtu" in ip link show');
  return Number(m[1]);
}

/** Pure: a search's result (or why there is none) as the wire's PathMtu. */
export function toPathMtu(target: string, r: PmtuResult | Error): PathMtu {
  if (r instanceof Error)
    return {
      target,
      effectiveMtu: 0,
      localMtu: 0,
      blackHole: false,
      announcedMtu: 0,
      probes: 0,
      error: r.message,
      announcedFrom: '',
    };
  return {
    target,
    effectiveMtu: r.effectiveMtu,
    localMtu: r.localMtu,
    blackHole: r.blackHole,
    announcedMtu: r.announcedMtu ?? 0,
    probes: r.probes.length,
    error: '',
    announcedFrom: r.announcedFrom ?? '',
  };
}

/**
 * The path MTU from the namespace at `netnsPath` ('' = this one) toward
 * `target`: the local MTU is the MTU of the interface the route to the target
 * leaves by, then the DF search. Never throws: a path that cannot be measured
 * (a Service address that does not answer ping, ICMP filtered) says why.
 */
export async function measurePathMtu(netnsPath: string, target: string): Promise<PathMtu> {
  try {
    const ns = netnsAt(netnsPath);
    const route = await runInNetns(ns, 'probe', 'ip', ['-o', 'route', 'get', target]);
    const dev = parseRouteDev(route.stdout);
    const link = await runInNetns(ns, 'probe', 'ip', ['-o', 'link', 'show', 'dev', dev]);
    return toPathMtu(target, await probePathMtu(netnsPath, target, parseLinkMtu(link.stdout)));
  } catch (err) {
    return toPathMtu(target, new Error(asCniBenchError(err).message));
  }
}
