/**
 * Reads the node's dataplane state from its host network namespace in two
 * lanes. On every sample, without starting a process: conntrack fill and drops
 * from the namespace's /proc/net/stat/nf_conntrack (netns-proc.ts), the global
 * conntrack maximum, and CPU and memory of the named dataplane processes. Rules
 * and maps (iptables of the backend kube-proxy uses with its chain counters,
 * nftables rules, sets and maps, BPF map totals, Cilium's LB maps from the
 * node's bpffs: cilium-reader.ts) come from real tools entered
 * with nsenter, read on every one-shot sample and on periodic ones only when
 * due (rules-cadence.ts); a periodic sample in between carries the last read
 * and says when it was taken (`rulesTimeMs`). A failed read is named in the
 * sample's `errors`, never reported as zero.
 */
import { readFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { asCniBenchError, parseError } from '../../core/errors.js';
import { netnsAt, runInNetns } from '../../core/netns.js';
import {
  type BpfMapTotals,
  type CiliumAgentStatus,
  DataplaneSample,
  type NetnsTcpCounters,
} from '../../gen/cnibench/v1/agent.js';
import { readTcpCounters } from '../observe/tcp-counters.js';
import { lbServiceMap, summariseBpfMaps } from './bpf-totals.js';
import { parseBpftoolMapDump, parseBpftoolMapShow } from './bpftool.js';
import { CiliumReader } from './cilium-reader.js';
import { parseNfConntrackStat, parseSysctlNumber } from './conntrack.js';
import { type BackendChoice, chooseIptablesBackend } from './iptables-backend.js';
import { parseIptablesSave } from './iptables-save.js';
import { KernelCpuReader } from './kernel-cpu.js';
import { NetnsProcView } from './netns-proc.js';
import { type NftSetCount, parseNftRuleset, parseServiceIpsListing } from './nft.js';
import { ProcessSampler } from './process-sampler.js';
import { DEFAULT_RULES_CADENCE, type RulesCadence, rulesReadDue } from './rules-cadence.js';

export type SampleBody = Omit<DataplaneSample, 'runId' | 'samplingJobId'>;

/** The fields a rules-and-maps read fills; a periodic sample between reads reuses them. */
type RulesFields = Pick<
  SampleBody,
  | 'iptablesBackend'
  | 'iptablesRules'
  | 'kubeServicesRules'
  | 'chains'
  | 'iptablesTableRules'
  | 'nftRules'
  | 'nftSets'
  | 'nftServiceIps'
  | 'bpf'
  | 'cilium'
>;

interface RulesRead {
  atMs: number;
  wallMs: number;
  fields: Partial<RulesFields>;
  errors: string[];
  notes: string[];
}

/** A rejection handler that names the failed read in `errors` and yields undefined (never a zero). */
const failInto =
  (errors: string[]) =>
  (what: string) =>
  (err: unknown): undefined => {
    errors.push(`${what}: ${asCniBenchError(err).message}`);
    return undefined;
  };

/** Global on Linux (a namespace other than the first sees it read-only), so the agent reads its own. */
const CONNTRACK_MAX_PATH = '/proc/sys/net/netfilter/nf_conntrack_max';

/** The backend choice is re-read this often (a node does not switch backends mid-run). */
const BACKEND_TTL_MS = 60_000;
/**
 * Above this many service-ips elements the full `nft -j list ruleset` is not
 * taken: with kube-proxy's anonymous vmaps its cost explodes (measured here at
 * 30,000 Services: 146 s and 2.3 GiB for nft, against 0.8 s for listing the
 * service-ips map alone), and a sample must not become the load it measures.
 */
export const NFT_FULL_LIST_MAX_SERVICES = 1000;
/**
 * Service chain counters a sample carries: only chains that saw packets, the
 * busiest first, at most this many. Every chain of 30,000 Services (150,000
 * counters) made a sample larger than gRPC's 4 MiB message limit, and the agent
 * kept reconnecting to resend it.
 */
export const MAX_CHAIN_COUNTERS = 2000;

export interface DataplaneSamplerOptions {
  /** Network namespace of the node; '' reads the agent's own. */
  hostNetns: string;
  /** Process names whose CPU and memory are sampled. */
  processNames?: readonly string[];
  procRoot?: string;
  /** How often periodic samples read rules and maps again (default DEFAULT_RULES_CADENCE). */
  rulesCadence?: RulesCadence;
  /** Cilium's bpffs when no cilium-agent runs in the node's network namespace (default /sys/fs/bpf). */
  ciliumBpfRoot?: string;
}

export interface SampleOptions {
  /** Read rules and maps now whatever the cadence says (one-shot samples: phase boundaries, sync checks). */
  fresh?: boolean;
}

/** The 1-minute load average: the first number of /proc/loadavg (host-wide). */
export function parseLoadAverage(text: string): number {
  const m = /^(\d+\.\d+) \d+\.\d+ \d+\.\d+ /.exec(text);
  if (!m) throw parseError('/proc/loadavg', text, 'expected three load averages');
  return Number(m[1]);
}

export async function readLoadAverage(): Promise<number> {
  return parseLoadAverage(await readFile('/proc/loadavg', 'utf8'));
}

export class DataplaneSampler {
  private backend: { choice: BackendChoice; atMs: number } | undefined;
  private readonly processes: ProcessSampler;
  private readonly netns: NetnsProcView;
  private readonly cilium: CiliumReader;
  private lastRules: RulesRead | undefined;
  private readonly kernel: KernelCpuReader;

  constructor(private readonly opts: DataplaneSamplerOptions) {
    this.processes = new ProcessSampler({
      ...(opts.processNames ? { names: [...opts.processNames] } : {}),
      ...(opts.procRoot ? { procRoot: opts.procRoot } : {}),
      netns: opts.hostNetns,
    });
    this.netns = new NetnsProcView(opts.hostNetns);
    this.kernel = new KernelCpuReader(this.processes, opts.procRoot ? { procRoot: opts.procRoot } : {});
    this.cilium = new CiliumReader({
      hostNetns: opts.hostNetns,
      ...(opts.procRoot ? { procRoot: opts.procRoot } : {}),
      ...(opts.ciliumBpfRoot ? { bpfRoot: opts.ciliumBpfRoot } : {}),
    });
  }

  /** Ends the namespace anchor, if one was started. */
  async close(): Promise<void> {
    await this.netns.close();
  }

  private async exec(file: string, args: string[], signal?: AbortSignal, okExitCodes?: number[]): Promise<string> {
    return (
      await runInNetns(netnsAt(this.opts.hostNetns), 'rules-dump', file, args, {
        ...(signal ? { signal } : {}),
        ...(okExitCodes ? { okExitCodes } : {}),
      })
    ).stdout;
  }

  /** The node's cilium-agent as its API reports itself; undefined without one (why goes in `notes`). */
  ciliumAgent(notes: string[]): Promise<CiliumAgentStatus | undefined> {
    return this.cilium.agentStatus(notes);
  }

  /** Which iptables backend kube-proxy on this node uses; cached for a minute. */
  async iptablesBackend(signal?: AbortSignal): Promise<BackendChoice> {
    if (this.backend && Date.now() - this.backend.atMs < BACKEND_TTL_MS) return this.backend.choice;
    const [nft, legacy] = await Promise.all([
      this.exec('iptables-nft-save', [], signal).catch(() => undefined),
      this.exec('iptables-legacy-save', [], signal).catch(() => undefined),
    ]);
    const choice = chooseIptablesBackend(nft, legacy);
    this.backend = { choice, atMs: Date.now() };
    return choice;
  }

  /**
   * nftables state: kube-proxy's service-ips map read on its own (cheap at any
   * size), then the whole ruleset unless that map is large (see
   * NFT_FULL_LIST_MAX_SERVICES); then rules are not counted and a note says so.
   */
  private async readNft(
    notes: string[],
    signal?: AbortSignal,
  ): Promise<{ rules: number | undefined; sets: NftSetCount[]; serviceIps: number | undefined }> {
    // Not `nft list tables` first: nft 1.0.6 builds its whole cache for it (53 s at 30,000 Services).
    const serviceIps = parseServiceIpsListing(
      await runInNetns(
        netnsAt(this.opts.hostNetns),
        'rules-dump',
        'nft',
        ['-j', 'list', 'map', 'ip', 'kube-proxy', 'service-ips'],
        { okExitCodes: [0, 1], ...(signal ? { signal } : {}) },
      ),
    );
    if (serviceIps !== undefined && serviceIps > NFT_FULL_LIST_MAX_SERVICES) {
      notes.push(
        `nft: ruleset not listed (service-ips holds ${serviceIps} elements, more than ${NFT_FULL_LIST_MAX_SERVICES}); rules and other sets not counted`,
      );
      return {
        rules: undefined,
        sets: [{ family: 'ip', table: 'kube-proxy', name: 'service-ips', kind: 'map', elements: serviceIps }],
        serviceIps,
      };
    }
    const full = parseNftRuleset(await this.exec('nft', ['-j', 'list', 'ruleset'], signal));
    return { rules: full.rules, sets: full.sets, serviceIps: full.serviceIps };
  }

  /** BPF map totals, and the entries of Cilium's LB service map when the node has one. */
  private async readBpf(signal?: AbortSignal): Promise<BpfMapTotals> {
    const maps = parseBpftoolMapShow(await this.exec('bpftool', ['map', 'show', '-j'], signal));
    const lb = lbServiceMap(maps);
    const entries = lb
      ? parseBpftoolMapDump(await this.exec('bpftool', ['map', 'dump', 'id', String(lb.id), '-j'], signal))
      : undefined;
    return summariseBpfMaps(maps, entries);
  }

  /** Conntrack fill and drops of the namespace, and the maximum: file reads only. */
  private async readConntrack(out: SampleBody, fail: (what: string) => (err: unknown) => undefined): Promise<void> {
    const [stat, max] = await Promise.all([
      this.netns
        .dir()
        .then((dir) => readFile(join(dir, 'stat', 'nf_conntrack'), 'utf8'))
        .then(parseNfConntrackStat, fail('conntrack')),
      readFile(CONNTRACK_MAX_PATH, 'utf8').then(
        (s) => parseSysctlNumber('net.netfilter.nf_conntrack_max', s),
        fail('conntrack_max'),
      ),
    ]);
    if (stat) {
      out.conntrackCount = stat.entries;
      out.conntrackDrops = stat.drop + stat.earlyDrop;
    }
    if (max !== undefined) out.conntrackMax = max;
  }

  /**
   * TCP counters of the agent's own namespace ("pod", where its pod-network
   * servers and clients run) and of the node's ("host"): two small file reads
   * each, cheap enough for every round's brackets. A failed read is an error of
   * the sample, never zeros.
   */
  async tcpCounters(errors: string[]): Promise<NetnsTcpCounters[]> {
    const fail = failInto(errors);
    const places: [string, Promise<string>][] = [['pod', Promise.resolve('/proc/self/net')]];
    if (this.opts.hostNetns) places.push(['host', this.netns.dir()]);
    const read = await Promise.all(
      places.map(async ([netns, dir]) => ({
        netns,
        counters: await dir.then(readTcpCounters).catch(fail(`tcp-counters ${netns}`)),
      })),
    );
    return read.filter((r): r is NetnsTcpCounters => r.counters !== undefined);
  }

  /** The node's kernel CPU and the agent's and dataplane processes' (kernel-cpu.ts); measurement brackets only. */
  async kernelCpu(errors: string[]): Promise<SampleBody['kernelCpu']> {
    return this.kernel.read(errors);
  }

  /** Rules and maps through the tools; the part of a sample that costs. */
  private async readRules(signal?: AbortSignal): Promise<RulesRead> {
    const atMs = Date.now();
    const errors: string[] = [];
    const notes: string[] = [];
    const fields: Partial<RulesFields> = {};
    const fail = failInto(errors);
    const backend = await this.iptablesBackend(signal);
    fields.iptablesBackend = backend.backend;
    const [ipt, nft, maps, cilium] = await Promise.all([
      this.exec(`iptables-${backend.backend}-save`, ['-c'], signal).then(parseIptablesSave, fail('iptables')),
      this.readNft(notes, signal).catch(fail('nft')),
      this.readBpf(signal).catch(fail('bpftool')),
      this.cilium.read(errors, signal).catch(fail('cilium')),
    ]);
    if (cilium) fields.cilium = cilium;
    if (ipt) {
      fields.iptablesRules = ipt.totalRules;
      fields.kubeServicesRules = ipt.kubeServicesRules;
      const busy = ipt.serviceChains.filter((c) => c.packets > 0).sort((a, b) => b.packets - a.packets);
      fields.chains = busy.slice(0, MAX_CHAIN_COUNTERS);
      if (busy.length > MAX_CHAIN_COUNTERS)
        notes.push(`iptables: ${busy.length} service chains saw packets; the ${MAX_CHAIN_COUNTERS} busiest are sent`);
      fields.iptablesTableRules = Object.fromEntries(
        Object.entries(ipt.tables).map(([t, v]) => [t, Object.values(v.chains).reduce((n, c) => n + c.rules, 0)]),
      );
    }
    if (nft) {
      fields.nftRules = nft.rules;
      fields.nftSets = nft.sets;
      fields.nftServiceIps = nft.serviceIps;
    }
    if (maps) fields.bpf = maps;
    return { atMs, wallMs: Date.now() - atMs, fields, errors, notes };
  }

  /**
   * One sample: conntrack and processes now; rules and maps now when `fresh`
   * or due, else the last read's (its errors and notes included).
   */
  async sample(signal?: AbortSignal, opts: SampleOptions = {}): Promise<SampleBody> {
    const errors: string[] = [];
    // Everything not read stays at its proto default; errors and notes say why.
    const { runId: _run, samplingJobId: _job, ...base } = DataplaneSample.fromPartial({ timeMs: Date.now() });
    const out: SampleBody = { ...base, errors };
    const fail = failInto(errors);
    const due = opts.fresh || rulesReadDue(this.lastRules, Date.now(), this.opts.rulesCadence ?? DEFAULT_RULES_CADENCE);
    const [rules, , procs, tcp] = await Promise.all([
      due ? this.readRules(signal) : Promise.resolve(this.lastRules as RulesRead),
      this.readConntrack(out, fail),
      this.processes.sample(),
      this.tcpCounters(errors),
    ]);
    out.tcpCounters = tcp;
    out.loadAverage = await readLoadAverage().catch(() => 0);
    out.machineCpus = cpus().length;
    if (due) this.lastRules = rules;
    Object.assign(out, rules.fields);
    out.rulesTimeMs = rules.atMs;
    errors.push(...rules.errors);
    out.notes.push(...rules.notes);
    out.processes = procs.processes;
    errors.push(...procs.errors);
    return out;
  }
}
