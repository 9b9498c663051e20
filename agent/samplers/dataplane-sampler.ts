/**
 * Reads the node's dataplane state from its host network namespace: iptables
 * rules and kube-proxy chain counters, conntrack fill. Each read is a real tool
 * (entered with nsenter when the agent is given a host namespace); a failed read
 * is named in the sample's `errors`, never reported as zero.
 */
import { asCniBenchError } from '../../core/errors.js';
import { inNetns, run } from '../../core/process.js';
import type { DataplaneSample } from '../../gen/cnibench/v1/agent.js';
import { parseConntrackCount, parseSysctlNumber } from './conntrack.js';
import { parseIptablesSave } from './iptables-save.js';

export type SampleBody = Omit<DataplaneSample, 'runId' | 'samplingJobId'>;

export class DataplaneSampler {
  constructor(private readonly hostNetns: string) {}

  private async exec(file: string, args: string[], signal?: AbortSignal): Promise<string> {
    const [bin, argv] = inNetns(this.hostNetns, file, args);
    return (await run(bin, argv, { tool: file, timeoutMs: 10_000, ...(signal ? { signal } : {}) })).stdout;
  }

  async sample(signal?: AbortSignal): Promise<SampleBody> {
    const errors: string[] = [];
    const out: SampleBody = { timeMs: Date.now(), iptablesRules: 0, kubeServicesRules: 0, conntrackCount: 0, conntrackMax: 0, chains: [], errors };
    const [ipt, ct, ctMax] = await Promise.allSettled([
      this.exec('iptables-save', ['-c'], signal).then(parseIptablesSave),
      this.exec('conntrack', ['-C'], signal).then(parseConntrackCount),
      this.exec('sysctl', ['-n', 'net.netfilter.nf_conntrack_max'], signal).then((s) => parseSysctlNumber('net.netfilter.nf_conntrack_max', s)),
    ]);
    if (ipt.status === 'fulfilled') {
      out.iptablesRules = ipt.value.totalRules;
      out.kubeServicesRules = ipt.value.kubeServicesRules;
      out.chains = ipt.value.serviceChains;
    } else errors.push(`iptables: ${asCniBenchError(ipt.reason).message}`);
    if (ct.status === 'fulfilled') out.conntrackCount = ct.value;
    else errors.push(`conntrack: ${asCniBenchError(ct.reason).message}`);
    if (ctMax.status === 'fulfilled') out.conntrackMax = ctMax.value;
    else errors.push(`conntrack_max: ${asCniBenchError(ctMax.reason).message}`);
    return out;
  }
}
