/**
 * What a Service scale sweep costs the machine, measured, printed, never
 * asserted: per kube-proxy mode, the wall time to program N Services x E
 * endpoints into a one-node lab in one step (target 10 s at 30,000 x 4), and
 * the CPU the agent's dataplane sampler costs at 1 Hz on that node (target 5
 * millicores), counting the tools it runs (iptables-save, nft, bpftool, ...)
 * as well as itself: periodic samples as the agent takes them (conntrack and
 * processes from /proc every second, rules when due) beside samples that read
 * everything every second (what a one-shot boundary sample costs).
 *
 *   npm run bench:sweep-cost -- [--services 30000] [--endpoints 4] [--sample-seconds 60] [--modes iptables,nftables]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DataplaneSampler } from '../agent/index.js';
import { createLogger } from '../core/log.js';
import { Lab, type ProxyMode } from '../lab/index.js';
import { writeFindings } from './findings.js';

const { values } = parseArgs({
  options: {
    services: { type: 'string', default: '30000' },
    endpoints: { type: 'string', default: '4' },
    'sample-seconds': { type: 'string', default: '60' },
    modes: { type: 'string', default: 'iptables,nftables' },
  },
});
const services = Number(values.services);
const endpoints = Number(values.endpoints);
const sampleSeconds = Number(values['sample-seconds']);
const modes = (values.modes ?? '').split(',') as ProxyMode[];
const log = createLogger({ component: 'bench' }, 'warn');

/**
 * User+system CPU seconds of this process plus its waited-for children (the
 * tools the sampler runs): /proc/self/stat utime, stime, cutime, cstime, in
 * clock ticks (100 per second on Linux).
 */
function cpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
}

/** User and system CPU seconds of the waited-for children (the restore/nft tools a step runs): cutime, cstime. */
function childCpu(): { user: number; system: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[13]) / 100, system: Number(f[14]) / 100 };
}

/** Samples at 1 Hz for `seconds` and returns the CPU it cost (millicores) and how many samples fit. */
async function samplerCost(
  sampler: DataplaneSampler,
  seconds: number,
  fresh: boolean,
): Promise<{ millicores: number; samples: number }> {
  const began = Date.now();
  const cpuBefore = cpuSeconds();
  let samples = 0;
  while (Date.now() - began < seconds * 1000) {
    const tick = Date.now();
    await sampler.sample(undefined, { fresh });
    samples++;
    await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - tick))));
  }
  return { millicores: ((cpuSeconds() - cpuBefore) / ((Date.now() - began) / 1000)) * 1000, samples };
}

const rows: string[] = [];
for (const mode of modes) {
  const lab = await Lab.create({ nodes: 1, log, proxy: { mode, iptablesBackend: 'legacy' } });
  try {
    const node = lab.plan.nodes[0];
    if (!node) throw new Error('lab has no node');
    const sampler = new DataplaneSampler({ hostNetns: `/run/netns/${node.ns}` });
    try {
      const idle = await samplerCost(sampler, sampleSeconds, false);
      const idleFresh = await samplerCost(sampler, sampleSeconds, true);
      const before = childCpu();
      const step = await lab.services.scale?.setDummyServices(services, endpoints);
      if (!step) throw new Error('lab has no scaler');
      const after = childCpu();
      const first = await sampler.sample(undefined, { fresh: true });
      const loaded = await samplerCost(sampler, sampleSeconds, false);
      const loadedFresh = await samplerCost(sampler, sampleSeconds, true);
      const mc = (c: { millicores: number; samples: number }) =>
        `${c.millicores.toFixed(1)} mcores (${c.samples} samples)`;
      rows.push(
        `| ${mode} | ${services.toLocaleString('en-US')} x ${endpoints} | ${(step.programmingMs / 1000).toFixed(1)} s (tools: ${(after.user - before.user).toFixed(1)} s user, ${(after.system - before.system).toFixed(1)} s system) | ${first.kubeServicesRules.toLocaleString('en-US')} | ${first.nftServiceIps ?? '-'} | ${mc(idle)} | ${mc(idleFresh)} | ${mc(loaded)} | ${mc(loadedFresh)} |`,
      );
    } finally {
      await sampler.close();
    }
  } finally {
    await lab.destroy();
  }
}
const text = [
  `sweep cost on this machine (${new Date().toISOString()}); targets: programming <= 10 s, sampler <= 5 mcores at 1 Hz`,
  '| mode | services x endpoints | programming (one step) | KUBE-SERVICES rules | service-ips elements | sampler at 1 Hz, no Services: periodic | same, all fresh | with the Services: periodic | same, all fresh |',
  '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ...rows,
  '',
].join('\n');
process.stdout.write(text);
await writeFindings({ bench: 'sweep-cost', title: 'Service sweep cost: programming and sampling', body: text });
