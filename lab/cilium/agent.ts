/**
 * One real cilium-agent per lab node, in that node's own network, mount and
 * cgroup namespaces, as multi-node kind clusters run Cilium on one kernel:
 *
 *   sh (root ns): joins the node's cgroup <cgroup2>/cni-bench/<id>/n<i>, then execs
 *   ip netns exec <node ns>            network namespace (and a mount namespace)
 *   unshare --cgroup                   cgroup namespace rooted at the node's cgroup
 *   sh: mount --make-rprivate /; the node's directory bound on /run (its own
 *       /run/cilium for state, sockets, pid file); cgroup2 mounted at
 *       /run/cilium/cgroupv2 (shows only the node's subtree); a fresh bpffs on
 *       /sys/fs/bpf; /proc/sys/kernel read-only (the machine's sysctls are not
 *       the lab's to change); then execs cilium-agent --config-dir (cilium-config's keys).
 *
 * Every step execs, so the spawned pid is the agent's. Its bpffs lives only in
 * its mount namespace: when the agent dies, its pins go with it. The scripts
 * are constants; every value reaches them as a positional argument.
 */
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { run } from '../../core/process.js';
import { type Component, startComponent } from '../k8s/component.js';
import { type CiliumBuild, LLVM_BIN } from '../k8s/tools.js';
import { AGENT_NODE_DIR, configDirFiles } from './config.js';

const OUTER = [
  'set -e',
  'inner=$1 cg=$2 ns=$3 dir=$4',
  'shift 4',
  'echo $$ > "$cg/cgroup.procs"',
  'exec ip netns exec "$ns" unshare --cgroup sh -c "$inner" cilium-lab-node "$dir" "$@"',
].join('\n');

const INNER = [
  'set -e',
  'dir=$1',
  'shift',
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
  'exec "$@"',
].join('\n');

export interface CiliumAgentOptions {
  build: CiliumBuild;
  nodeName: string;
  nodeNs: string;
  /** The node's cgroup directory in the root cgroup namespace. */
  cgroupDir: string;
  /** Host directory bound on the agent's /run. */
  runDir: string;
  config: Readonly<Record<string, string>>;
  /** In-lab kubeconfig (certificates embedded). */
  kubeconfig: string;
}

export interface CiliumAgent {
  readonly nodeName: string;
  readonly pid: number;
  /** The agent's API socket as the root mount namespace sees it. */
  readonly socket: string;
  exitCode(): number | undefined;
  tail(lines: number): string;
  /** Waits until `cilium-dbg status --brief` says OK. */
  ready(timeoutMs: number, signal?: AbortSignal): Promise<number>;
  /** Waits until each of `podIps` is a Cilium endpoint in state ready (after a restart: restored and regenerated). */
  endpointsReady(podIps: readonly string[], timeoutMs: number, signal?: AbortSignal): Promise<number>;
  stop(): Promise<void>;
}

/** Pure: which of `podIps` are not yet ready endpoints in `cilium-dbg endpoint list -o json`. */
export function endpointsNotReady(stdout: string, podIps: readonly string[]): string[] {
  const eps = JSON.parse(stdout) as {
    status?: { state?: string; networking?: { addressing?: { ipv4?: string }[] } };
  }[];
  const ready = new Set(
    eps
      .filter((e) => e.status?.state === 'ready')
      .flatMap((e) => (e.status?.networking?.addressing ?? []).map((a) => a.ipv4 ?? '')),
  );
  return podIps.filter((ip) => !ready.has(ip));
}

/** The agent's /run/cilium as the root mount namespace sees it. */
export function agentRunDir(runDir: string): string {
  return join(runDir, 'cilium');
}

async function prepare(o: CiliumAgentOptions): Promise<void> {
  const nodeDir = join(o.runDir, AGENT_NODE_DIR.replace('/run/', ''));
  // A restart with another configuration: no key of the last one may linger.
  await rm(join(nodeDir, 'config'), { recursive: true, force: true });
  await mkdir(join(nodeDir, 'config'), { recursive: true, mode: 0o700 });
  await mkdir(agentRunDir(o.runDir), { recursive: true });
  for (const [key, value] of configDirFiles(o.config)) await writeFile(join(nodeDir, 'config', key), value);
  await writeFile(join(nodeDir, 'kubeconfig'), o.kubeconfig, { mode: 0o600 });
  // The agent writes features.h into <lib-dir>/bpf at start: each node its own copy.
  await cp(o.build.bpf, join(nodeDir, 'lib', 'bpf'), { recursive: true });
}

export async function startCiliumAgent(o: CiliumAgentOptions): Promise<CiliumAgent> {
  await prepare(o);
  const env = {
    ...process.env,
    PATH: `${LLVM_BIN}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`,
    K8S_NODE_NAME: o.nodeName,
  };
  const proc: Component = startComponent(
    o.runDir,
    'cilium-agent',
    'sh',
    [
      '-c',
      OUTER,
      'cilium-lab-launch',
      INNER,
      o.cgroupDir,
      o.nodeNs,
      o.runDir,
      o.build.agent,
      `--config-dir=${AGENT_NODE_DIR}/config`,
    ],
    env,
  );
  const socket = join(agentRunDir(o.runDir), 'cilium.sock');
  return {
    nodeName: o.nodeName,
    pid: proc.pid,
    socket,
    exitCode: () => proc.exitCode(),
    tail: (n) => proc.tail(n),
    ready: async (timeoutMs, signal) => {
      const began = Date.now();
      let last = '';
      while (Date.now() - began < timeoutMs) {
        if (signal?.aborted)
          throw new CniBenchError(ErrorCodes.CANCELLED, `interrupted while waiting for cilium-agent on ${o.nodeName}`);
        if (proc.exitCode() !== undefined)
          throw new CniBenchError(
            ErrorCodes.LAB,
            `cilium-agent on ${o.nodeName} exited with ${proc.exitCode()}:\n${proc.tail(25)}`,
          );
        const r = await run(o.build.dbg, ['-H', `unix://${socket}`, 'status', '--brief'], {
          tool: 'cilium-dbg',
          timeoutMs: 10_000,
          okExitCodes: [0, 1, 2],
        }).catch((err: Error) => ({ exitCode: -1, stdout: '', stderr: err.message }));
        if (r.exitCode === 0) return Date.now() - began;
        last = `${r.stdout}${r.stderr}`.trim().split('\n').slice(-2).join(' ');
        await sleep(1000);
      }
      throw new CniBenchError(
        ErrorCodes.TIMEOUT,
        `cilium-agent on ${o.nodeName} not ready after ${timeoutMs} ms (cilium-dbg status: ${last}):\n${proc.tail(25)}`,
      );
    },
    endpointsReady: async (podIps, timeoutMs, signal) => {
      const began = Date.now();
      let missing: string[] = [...podIps];
      while (Date.now() - began < timeoutMs) {
        if (signal?.aborted)
          throw new CniBenchError(ErrorCodes.CANCELLED, `interrupted while waiting for endpoints on ${o.nodeName}`);
        if (proc.exitCode() !== undefined)
          throw new CniBenchError(ErrorCodes.LAB, `cilium-agent on ${o.nodeName} exited with ${proc.exitCode()}`);
        const r = await run(o.build.dbg, ['-H', `unix://${socket}`, 'endpoint', 'list', '-o', 'json'], {
          tool: 'cilium-dbg',
          timeoutMs: 20_000,
        }).catch(() => undefined);
        if (r) {
          try {
            missing = endpointsNotReady(r.stdout, podIps);
          } catch {
            // a partial answer while the agent starts: ask again
          }
          if (!missing.length) return Date.now() - began;
        }
        await sleep(1000);
      }
      throw new CniBenchError(
        ErrorCodes.TIMEOUT,
        `cilium-agent on ${o.nodeName}: endpoints ${missing.join(', ')} not ready after ${timeoutMs} ms:\n${proc.tail(25)}`,
      );
    },
    stop: () => proc.stop(),
  };
}
