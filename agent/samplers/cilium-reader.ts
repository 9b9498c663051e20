/**
 * Reads Cilium's state on this node from the node's own bpffs: the LB maps
 * (frontends and their backends), the socket-LB counter, and the memory of
 * every map pinned there. The node's bpffs is the one its cilium-agent sees:
 * the agent running in the node's network namespace is found in /proc and
 * bpftool is entered into its mount namespace (a lab runs one agent per node,
 * each with its own bpffs); without such a process (a cluster's agent pod
 * without hostPID) the agent's own mount namespace is read. A node without
 * Cilium's pinned services map has no Cilium state, and no error.
 */
import { access, readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { asCniBenchError } from '../../core/errors.js';
import { run } from '../../core/process.js';
import type { BpfMapMemory, CiliumAgentStatus, CiliumState } from '../../gen/cnibench/v1/agent.js';
import { TOP_MAPS } from './bpf-totals.js';
import { type BpfMap, parseBpftoolDumpEntries, parseBpftoolMapShow } from './bpftool.js';
import { ciliumApiGet, parseCiliumDebuginfo, socketCandidates } from './cilium-api.js';
import {
  CILIUM_MAPS,
  decodeLb4Backends,
  decodeLb4Services,
  lbFrontends,
  METRIC_EGRESS,
  metricsCount,
  REASON_LB_REVNAT_DELETE,
} from './cilium-lb.js';

export const DEFAULT_BPF_ROOT = '/sys/fs/bpf';
const AGENT_COMM = 'cilium-agent';
/** A node without a cilium-agent is scanned for one again at most this often (a scan reads every pid's comm). */
const RESCAN_MS = 30_000;

/** Pure: the agent's --bpf-root from its NUL-separated cmdline (`--bpf-root=X` or `--bpf-root X`), else the default. */
export function bpfRootFromCmdline(cmdline: string): string {
  const args = cmdline.split('\0');
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a.startsWith('--bpf-root=')) return a.slice('--bpf-root='.length) || DEFAULT_BPF_ROOT;
    if (a === '--bpf-root' && args[i + 1]) return args[i + 1] as string;
  }
  return DEFAULT_BPF_ROOT;
}

/** Pure: the maps pinned under `root`, each named by its pin (bpftool's own name is cut at 15 characters), largest first. */
export function pinnedMapMemory(maps: readonly BpfMap[], root: string): BpfMapMemory[] {
  const prefix = root.endsWith('/') ? root : `${root}/`;
  return maps
    .map((m) => ({ m, pin: (m.pinned ?? []).find((p) => p.startsWith(prefix)) }))
    .filter((x): x is { m: BpfMap; pin: string } => x.pin !== undefined)
    .map(({ m, pin }) => ({
      name: pin.slice(pin.lastIndexOf('/') + 1),
      type: m.type,
      maxEntries: m.maxEntries,
      bytesMemlock: m.bytesMemlock,
    }))
    .sort((a, b) => b.bytesMemlock - a.bytesMemlock || a.name.localeCompare(b.name));
}

const failed =
  (errors: string[], what: string) =>
  (err: unknown): undefined => {
    errors.push(`${what}: ${asCniBenchError(err).message}`);
    return undefined;
  };

interface Agent {
  pid: number;
  bpfRoot: string;
  cmdline: string;
}

export interface CiliumReaderOptions {
  /** The node's network namespace ('' = the agent's own). */
  hostNetns: string;
  procRoot?: string;
  /** Where the bpffs is when no cilium-agent process is visible. */
  bpfRoot?: string;
}

export class CiliumReader {
  private agent: Agent | undefined;
  private lastScanMs = -Infinity;
  private readonly procRoot: string;

  constructor(private readonly opts: CiliumReaderOptions) {
    this.procRoot = opts.procRoot ?? '/proc';
  }

  /** The node's cilium-agent: the cached one while it lives, else a scan of /proc for one in the node's network namespace. */
  private async findAgent(): Promise<Agent | undefined> {
    if (this.agent && (await this.comm(this.agent.pid)) === AGENT_COMM) return this.agent;
    if (!this.agent && Date.now() - this.lastScanMs < RESCAN_MS) return undefined;
    this.agent = undefined;
    this.lastScanMs = Date.now();
    const want = `net:[${(await stat(this.opts.hostNetns || join(this.procRoot, 'self/ns/net'))).ino}]`;
    for (const d of await readdir(this.procRoot)) {
      if (!/^\d+$/.test(d) || (await this.comm(Number(d))) !== AGENT_COMM) continue;
      if ((await readlink(join(this.procRoot, d, 'ns/net')).catch(() => '')) !== want) continue;
      const cmdline = await readFile(join(this.procRoot, d, 'cmdline'), 'utf8').catch(() => '');
      this.agent = { pid: Number(d), bpfRoot: bpfRootFromCmdline(cmdline), cmdline };
      return this.agent;
    }
    return undefined;
  }

  private async comm(pid: number): Promise<string | undefined> {
    return (await readFile(join(this.procRoot, String(pid), 'comm'), 'utf8').catch(() => undefined))?.trim();
  }

  private async bpftool(agent: Agent | undefined, args: string[], signal?: AbortSignal): Promise<string> {
    const [bin, argv] = agent
      ? ['nsenter', [`--mount=${join(this.procRoot, String(agent.pid), 'ns/mnt')}`, '--', 'bpftool', ...args]]
      : ['bpftool', args];
    return (
      await run(bin, argv, {
        tool: 'bpftool',
        timeoutMs: 30_000,
        maxBuffer: 1024 * 1024 * 1024,
        ...(signal ? { signal } : {}),
      })
    ).stdout;
  }

  /**
   * The node's cilium-agent as its API reports itself (version, kube-proxy
   * replacement, routing), or undefined when the node has no cilium-agent
   * process; an agent whose API does not answer is a line in `errors`.
   */
  async agentStatus(errors: string[]): Promise<CiliumAgentStatus | undefined> {
    const agent = await this.findAgent();
    if (!agent) return undefined;
    const tried: string[] = [];
    for (const socket of socketCandidates(this.procRoot, agent.pid, agent.cmdline)) {
      try {
        const body = await ciliumApiGet(socket, '/v1/debuginfo');
        return { ...parseCiliumDebuginfo(body), socket, agentPid: agent.pid };
      } catch (err) {
        tried.push(asCniBenchError(err).message);
      }
    }
    errors.push(`cilium-agent (pid ${agent.pid}) API not read: ${tried.join('; ')}`);
    return undefined;
  }

  /** Cilium's state, or undefined when the node shows no Cilium (no agent in its namespace and no pinned services map here). */
  async read(errors: string[], signal?: AbortSignal): Promise<CiliumState | undefined> {
    const agent = await this.findAgent();
    const root = agent?.bpfRoot ?? this.opts.bpfRoot ?? DEFAULT_BPF_ROOT;
    const pin = (name: string): string => join(root, 'tc/globals', name);
    if (
      !agent &&
      !(await access(pin(CILIUM_MAPS.services)).then(
        () => true,
        () => false,
      ))
    )
      return undefined;
    const dump = async (name: string) =>
      parseBpftoolDumpEntries(await this.bpftool(agent, ['map', 'dump', 'pinned', pin(name), '-j'], signal));
    const [services, backends, metrics, reverseSk, maps] = await Promise.all([
      dump(CILIUM_MAPS.services),
      dump(CILIUM_MAPS.backends),
      // Counters only: without them the LB state still decides sync; the sample names what failed.
      dump(CILIUM_MAPS.metrics).then(
        (e) => metricsCount(e, REASON_LB_REVNAT_DELETE, METRIC_EGRESS),
        failed(errors, `cilium ${CILIUM_MAPS.metrics}`),
      ),
      dump(CILIUM_MAPS.reverseSk).then((e) => e.length, failed(errors, `cilium ${CILIUM_MAPS.reverseSk}`)),
      this.bpftool(agent, ['-f', 'map', 'show', '-j'], signal).then(parseBpftoolMapShow),
    ]);
    const lb = lbFrontends(decodeLb4Services(services), decodeLb4Backends(backends));
    const pinned = pinnedMapMemory(maps, root);
    const maxOf = (name: string): number => pinned.find((m) => m.name === name)?.maxEntries ?? 0;
    return {
      bpffs: root,
      agentPid: agent?.pid ?? 0,
      serviceEntries: services.length,
      backendEntries: backends.length,
      frontends: lb.frontends,
      programmedFrontends: lb.programmed,
      frontendList: lb.list,
      frontendsTruncated: lb.truncated,
      ...(metrics !== undefined ? { socketLbXlatedClosed: metrics } : {}),
      ...(reverseSk !== undefined ? { socketLbLive: reverseSk } : {}),
      pinnedMaps: pinned.length,
      pinnedBytesMemlock: pinned.reduce((n, m) => n + m.bytesMemlock, 0),
      topMaps: pinned.slice(0, TOP_MAPS),
      lbServicesMaxEntries: maxOf(CILIUM_MAPS.services),
      lbBackendsMaxEntries: maxOf(CILIUM_MAPS.backends),
    };
  }
}
