/**
 * The one way into a network namespace: runs a tool inside a namespace given
 * by name (/run/netns/NAME, as `ip netns add` makes it), by path (a bind mount,
 * /proc/PID/ns/net) or by the pid of a process in it, through core/process.ts,
 * with a named preset for how long it may take and how much it may print.
 *
 * The mechanism is nsenter, not `ip netns exec`, for every caller (agent, lab
 * and bench alike): the agent must enter the node's namespace by path
 * (/proc/1/ns/net from a DaemonSet pod), which `ip netns exec` cannot name,
 * and one mechanism means one behaviour to know. nsenter switches only the
 * network namespace and execs the tool in place, so the pid a caller gets is
 * the tool's (observers read /proc/PID/net through it). Unlike `ip netns exec`
 * it does not unshare the mount namespace and remount /sys: /sys/class/net
 * still shows the namespace that mounted sysfs, so per-namespace counters are
 * read from /proc/net (which follows the reader), never from /sys.
 */
import { type RunOptions, type RunResult, run } from './process.js';

export type Netns = { readonly name: string } | { readonly path: string } | { readonly pid: number };

const MIB = 1024 * 1024;

/**
 * How long a command in a namespace may take and how much output is kept
 * (more is an error, never a silent cut): one preset per kind of work, so the
 * same work gets the same limits wherever it is done.
 */
export const NETNS_PRESETS = Object.freeze({
  /** A small read: a /proc/net file, a sysctl, `ip -j route get`: milliseconds when healthy. */
  probe: Object.freeze({ timeoutMs: 5_000, maxBuffer: 16 * MIB }),
  /** A one-off change or check: `sysctl -w`, `tc qdisc replace`, `nft list tables`. */
  change: Object.freeze({ timeoutMs: 10_000, maxBuffer: 16 * MIB }),
  /** A dump of rules or BPF maps, which at 30,000 Services runs to hundreds of MiB and seconds of CPU. */
  'rules-dump': Object.freeze({ timeoutMs: 30_000, maxBuffer: 1024 * MIB }),
  /** Loading rules or generating load: iptables-nft-restore of 5,000 Services takes about a minute. */
  load: Object.freeze({ timeoutMs: 15 * 60_000, maxBuffer: 64 * MIB }),
});
export type NetnsPreset = keyof typeof NETNS_PRESETS;

const NAME = /^[A-Za-z0-9_.-]+$/;

/** The namespace file nsenter opens. */
export function netnsPath(ns: Netns): string {
  if ('name' in ns) {
    if (!NAME.test(ns.name) || ns.name === '.' || ns.name === '..')
      throw new Error(`netns name: '${ns.name}' is not a namespace name (letters, digits, . _ -)`);
    return `/run/netns/${ns.name}`;
  }
  if ('pid' in ns) {
    if (!Number.isInteger(ns.pid) || ns.pid <= 0) throw new Error(`netns pid: ${ns.pid} is not a pid`);
    return `/proc/${ns.pid}/ns/net`;
  }
  if (!ns.path.startsWith('/')) throw new Error(`netns path: '${ns.path}' is not an absolute path`);
  return ns.path;
}

/** A configured namespace path as a Netns; '' or undefined (this process's own namespace) is undefined. */
export function netnsAt(path: string | undefined): Netns | undefined {
  return path ? { path } : undefined;
}

/** The argument array that runs `file args` inside `ns` (as is without one): for long-running processes and wrappers. */
export function netnsArgv(ns: Netns | undefined, file: string, args: readonly string[]): [string, string[]] {
  if (!ns) return [file, [...args]];
  return ['nsenter', [`--net=${netnsPath(ns)}`, '--', file, ...args]];
}

export type NetnsRunOptions = Omit<RunOptions, 'timeoutMs' | 'maxBuffer' | 'onSpawn' | 'stdin'>;

/** Runs `file args` to completion inside `ns` (this process's namespace when undefined) with the preset's limits. */
export function runInNetns(
  ns: Netns | undefined,
  preset: NetnsPreset,
  file: string,
  args: readonly string[],
  opts: NetnsRunOptions = {},
): Promise<RunResult> {
  const [bin, argv] = netnsArgv(ns, file, args);
  return run(bin, argv, { tool: file, ...opts, ...NETNS_PRESETS[preset] });
}
