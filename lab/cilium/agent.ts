/**
 * One real cilium-agent per lab node, in that node's own network, mount and
 * cgroup namespaces, as multi-node kind clusters run Cilium on one kernel.
 * The namespaces are the node's, held by node-mounts.ts: the agent enters
 * them at each start (nsenter), so its bpffs, /run/cilium and cgroup2 mount
 * outlive it as a node's do, and a restarted agent finds its pinned maps,
 * programs and links. Every step execs, so the spawned pid is the agent's.
 */
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { run } from '../../core/process.js';
import { type Component, startComponent } from '../k8s/component.js';
import { type CiliumBuild, LLVM_BIN } from '../k8s/tools.js';
import { AGENT_NODE_DIR, configDirFiles } from './config.js';
import { inNodeNamespaces } from './node-mounts.js';

export interface CiliumAgentOptions {
  build: CiliumBuild;
  nodeName: string;
  /** The node's cgroup directory in the root cgroup namespace. */
  cgroupDir: string;
  /** Host directory bound on the agent's /run. */
  runDir: string;
  /** The node's namespace holder (node-mounts.ts), whose namespaces the agent enters. */
  holderPid: number;
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
    inNodeNamespaces(o.holderPid, o.cgroupDir, [o.build.agent, `--config-dir=${AGENT_NODE_DIR}/config`]),
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
