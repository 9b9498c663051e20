/**
 * A lab node's own mount namespace, the stand-in for a node's host mount
 * namespace, held open by a process of the lab so that it outlives any one
 * cilium-agent, as a node's /sys/fs/bpf outlives the agent's pod:
 *
 *   sh (root ns): joins the node's cgroup <cgroup2>/cni-bench/<id>/n<i>, then execs
 *   ip netns exec <node ns>            network namespace (and a mount namespace)
 *   unshare --cgroup                   cgroup namespace rooted at the node's cgroup
 *   sh: mount --make-rprivate /; the node's directory bound on /run (its own
 *       /run/cilium for state, sockets, pid file); cgroup2 mounted at
 *       /run/cilium/cgroupv2 (shows only the node's subtree); a fresh bpffs on
 *       /sys/fs/bpf; /proc/sys/kernel read-only (the machine's sysctls are not
 *       the lab's to change); then execs sleep, the holder.
 *
 * Each cilium-agent start enters these namespaces (agent.ts), so a restarted
 * agent finds the maps, programs and links its predecessor pinned, as Cilium's
 * DaemonSet gets the node's bpffs through a hostPath (install/kubernetes/cilium/
 * templates/cilium-agent/daemonset.yaml, mount-bpf-fs). Without it Cilium itself
 * warns that a restart drops every connection (pkg/bpf/bpffs_linux.go,
 * checkOrMountDefaultLocations). Stopping the holder (after its agent) is what
 * frees the node's pins; it sits in the node's netns and cgroup, so a crashed
 * lab's cleanup kills it with the rest. The scripts are constants; every value
 * reaches them as a positional argument.
 */
import { mkdirSync } from 'node:fs';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { type Component, startComponent } from '../k8s/component.js';

const OUTER = [
  'set -e',
  'inner=$1 cg=$2 ns=$3 dir=$4',
  'shift 4',
  'echo $$ > "$cg/cgroup.procs"',
  'exec ip netns exec "$ns" unshare --cgroup sh -c "$inner" cilium-lab-node "$dir"',
].join('\n');

const INNER = [
  'set -e',
  'dir=$1',
  'mount --make-rprivate /',
  'mount --bind "$dir" /run',
  'mkdir -p /run/cilium/cgroupv2',
  'mount -t cgroup2 cgroup2 /run/cilium/cgroupv2',
  'mount -t bpf bpf /sys/fs/bpf',
  // Machine-wide sysctls stay as they are: Cilium sets kernel.unprivileged_bpf_disabled=1
  // (sticky until reboot) and kernel.timer_migration=0 and ignores a refusal
  // (pkg/datapath/loader/base.go); its per-namespace ones live under /proc/sys/net.
  'mount --bind /proc/sys/kernel /proc/sys/kernel',
  'mount -o remount,bind,ro /proc/sys/kernel',
  // The mounts are done when this line is in the log: the holder is ready to be entered.
  'echo mounts-ready',
  'exec sleep infinity',
].join('\n');

/** Runs `argv` in the holder's network, mount and cgroup namespaces, as a member of cgroup `cgroupDir`. */
export function inNodeNamespaces(holderPid: number, cgroupDir: string, argv: readonly string[]): string[] {
  return [
    '-c',
    'cg=$1 pid=$2; shift 2; echo $$ > "$cg/cgroup.procs"; exec nsenter --target "$pid" --net --mount --cgroup -- "$@"',
    'cilium-lab-enter',
    cgroupDir,
    String(holderPid),
    ...argv,
  ];
}

export interface NodeMounts {
  readonly pid: number;
  exitCode(): number | undefined;
  /** Resolves once the mounts are in place (the holder said so); throws if it exited first. */
  ready(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts node `nodeNs`'s holder; `runDir` is the host directory bound on its /run, where its log goes too. */
export function startNodeMounts(runDir: string, cgroupDir: string, nodeNs: string): NodeMounts {
  mkdirSync(runDir, { recursive: true });
  const proc: Component = startComponent(runDir, 'node-mounts', 'sh', [
    '-c',
    OUTER,
    'cilium-lab-launch',
    INNER,
    cgroupDir,
    nodeNs,
    runDir,
  ]);
  return {
    pid: proc.pid,
    exitCode: () => proc.exitCode(),
    ready: async (timeoutMs) => {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        if (proc.exitCode() !== undefined)
          throw new CniBenchError(
            ErrorCodes.LAB,
            `node mounts on ${nodeNs} exited with ${proc.exitCode()}: ${proc.tail(10)}`,
          );
        if (proc.tail(5).includes('mounts-ready')) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new CniBenchError(
        ErrorCodes.LAB,
        `node mounts on ${nodeNs} not ready after ${timeoutMs} ms: ${proc.tail(10)}`,
      );
    },
    stop: () => proc.stop(),
  };
}
