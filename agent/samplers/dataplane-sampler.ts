/**
 * Reads the node's dataplane state from its host network namespace: iptables
 * rules (the backend kube-proxy uses) and kube-proxy chain counters, nftables
 * rules, sets and maps, conntrack fill, BPF map totals, and CPU and memory of
 * the named dataplane processes. Each read is a real tool (entered with nsenter
 * when the agent is given a host namespace) or a direct /proc read; a failed
 * read is named in the sample's `errors`, never reported as zero.
 */
import { asCniBenchError } from '../../core/errors.js';
import { inNetns, run } from '../../core/process.js';
import { DataplaneSample, type BpfMapTotals } from '../../gen/cnibench/v1/agent.js';
import { lbServiceMap, summariseBpfMaps } from './bpf-totals.js';
import { parseBpftoolMapDump, parseBpftoolMapShow } from './bpftool.js';
import { parseConntrackCount, parseSysctlNumber } from './conntrack.js';
import { chooseIptablesBackend, type BackendChoice } from './iptables-backend.js';
import { parseIptablesSave } from './iptables-save.js';
import { parseNftRuleset, parseServiceIpsListing, type NftSetCount } from './nft.js';
import { ProcessSampler } from './process-sampler.js';

export type SampleBody = Omit<DataplaneSample, 'runId' | 'samplingJobId'>;

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
}

export class DataplaneSampler {
  private backend: { choice: BackendChoice; atMs: number } | undefined;
  private readonly processes: ProcessSampler;

  constructor(private readonly opts: DataplaneSamplerOptions) {
    this.processes = new ProcessSampler({ ...(opts.processNames ? { names: [...opts.processNames] } : {}), ...(opts.procRoot ? { procRoot: opts.procRoot } : {}) });
  }

  private async exec(file: string, args: string[], signal?: AbortSignal): Promise<string> {
    const [bin, argv] = inNetns(this.opts.hostNetns, file, args);
    return (await run(bin, argv, { tool: file, timeoutMs: 30_000, maxBuffer: 1024 * 1024 * 1024, ...(signal ? { signal } : {}) })).stdout;
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
  private async readNft(notes: string[], signal?: AbortSignal): Promise<{ rules: number | undefined; sets: NftSetCount[]; serviceIps: number | undefined }> {
    // Not `nft list tables` first: nft 1.0.6 builds its whole cache for it (53 s at 30,000 Services).
    const [bin, argv] = inNetns(this.opts.hostNetns, 'nft', ['-j', 'list', 'map', 'ip', 'kube-proxy', 'service-ips']);
    const serviceIps = parseServiceIpsListing(await run(bin, argv, { tool: 'nft', timeoutMs: 30_000, okExitCodes: [0, 1], ...(signal ? { signal } : {}) }));
    if (serviceIps !== undefined && serviceIps > NFT_FULL_LIST_MAX_SERVICES) {
      notes.push(`nft: ruleset not listed (service-ips holds ${serviceIps} elements, more than ${NFT_FULL_LIST_MAX_SERVICES}); rules and other sets not counted`);
      return { rules: undefined, sets: [{ family: 'ip', table: 'kube-proxy', name: 'service-ips', kind: 'map', elements: serviceIps }], serviceIps };
    }
    const full = parseNftRuleset(await this.exec('nft', ['-j', 'list', 'ruleset'], signal));
    return { rules: full.rules, sets: full.sets, serviceIps: full.serviceIps };
  }

  /** BPF map totals, and the entries of Cilium's LB service map when the node has one. */
  private async readBpf(signal?: AbortSignal): Promise<BpfMapTotals> {
    const maps = parseBpftoolMapShow(await this.exec('bpftool', ['map', 'show', '-j'], signal));
    const lb = lbServiceMap(maps);
    const entries = lb ? parseBpftoolMapDump(await this.exec('bpftool', ['map', 'dump', 'id', String(lb.id), '-j'], signal)) : undefined;
    return summariseBpfMaps(maps, entries);
  }

  async sample(signal?: AbortSignal): Promise<SampleBody> {
    const errors: string[] = [];
    // Everything not read stays at its proto default; errors and notes say why.
    const { runId: _run, samplingJobId: _job, ...base } = DataplaneSample.fromPartial({ timeMs: Date.now() });
    const out: SampleBody = { ...base, errors };
    const fail = (what: string) => (err: unknown): undefined => {
      errors.push(`${what}: ${asCniBenchError(err).message}`);
      return undefined;
    };
    const backend = await this.iptablesBackend(signal);
    out.iptablesBackend = backend.backend;
    const [ipt, nft, ct, ctMax, maps, procs] = await Promise.all([
      this.exec(`iptables-${backend.backend}-save`, ['-c'], signal).then(parseIptablesSave, fail('iptables')),
      this.readNft(out.notes, signal).catch(fail('nft')),
      this.exec('conntrack', ['-C'], signal).then(parseConntrackCount, fail('conntrack')),
      this.exec('sysctl', ['-n', 'net.netfilter.nf_conntrack_max'], signal).then((s) => parseSysctlNumber('net.netfilter.nf_conntrack_max', s), fail('conntrack_max')),
      this.readBpf(signal).catch(fail('bpftool')),
      this.processes.sample(),
    ]);
    if (ipt) {
      out.iptablesRules = ipt.totalRules;
      out.kubeServicesRules = ipt.kubeServicesRules;
      const busy = ipt.serviceChains.filter((c) => c.packets > 0).sort((a, b) => b.packets - a.packets);
      out.chains = busy.slice(0, MAX_CHAIN_COUNTERS);
      if (busy.length > MAX_CHAIN_COUNTERS) out.notes.push(`iptables: ${busy.length} service chains saw packets; the ${MAX_CHAIN_COUNTERS} busiest are sent`);
      out.iptablesTableRules = Object.fromEntries(Object.entries(ipt.tables).map(([t, v]) => [t, Object.values(v.chains).reduce((n, c) => n + c.rules, 0)]));
    }
    if (nft) {
      out.nftRules = nft.rules;
      out.nftSets = nft.sets;
      out.nftServiceIps = nft.serviceIps;
    }
    if (ct !== undefined) out.conntrackCount = ct;
    if (ctMax !== undefined) out.conntrackMax = ctMax;
    if (maps) out.bpf = maps;
    out.processes = procs.processes;
    errors.push(...procs.errors);
    return out;
  }
}
