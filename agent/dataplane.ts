/**
 * Detects what dataplane the node runs, for Register: the iptables backend (as
 * kube-proxy's image chooses it: kubelet's hint chain, else the fuller backend), whether nftables
 * works, whether kube-proxy's KUBE-SERVICES chain exists, whether BPF maps
 * are present, and the node's cilium-agent as its API reports itself (version). What cannot be read is said in `notes`, not guessed.
 */
import { asCniBenchError } from '../core/errors.js';
import { netnsAt, runInNetns } from '../core/netns.js';
import type { Dataplane } from '../gen/cnibench/v1/agent.js';
import { parseBpftoolMapShow } from './samplers/bpftool.js';
import type { DataplaneSampler } from './samplers/dataplane-sampler.js';
import { parseIptablesSave } from './samplers/iptables-save.js';

export async function detectDataplane(hostNetns: string, sampler: DataplaneSampler): Promise<Dataplane> {
  const notes: string[] = [];
  const exec = async (file: string, args: string[]): Promise<string> =>
    (await runInNetns(netnsAt(hostNetns), 'rules-dump', file, args)).stdout;
  const note =
    (what: string) =>
    (err: unknown): undefined => {
      notes.push(`${what}: ${asCniBenchError(err).message}`);
      return undefined;
    };
  const choice = await sampler.iptablesBackend();
  const backend = choice.backend;
  const [nat, nft, maps, cilium] = await Promise.all([
    exec(`iptables-${backend}-save`, ['-t', 'nat']).then(parseIptablesSave, note(`iptables-${backend}-save`)),
    exec('nft', ['list', 'tables']).then((out) => ({ kubeProxy: /^table ip kube-proxy$/m.test(out) }), note('nft')),
    exec('bpftool', ['map', 'show', '-j']).then(parseBpftoolMapShow, note('bpftool')),
    sampler.ciliumAgent(notes).catch(note('cilium-agent API')),
  ]);
  return {
    iptablesBackend: backend,
    nftables: nft !== undefined,
    kubeProxyNftables: nft?.kubeProxy ?? false,
    kubeServices:
      (nat?.kubeServicesRules ?? 0) > 0 || Boolean(nat && 'KUBE-SERVICES' in (nat.tables.nat?.chains ?? {})),
    kubeServicesRules: nat?.kubeServicesRules ?? 0,
    bpfMaps: (maps?.length ?? 0) > 0,
    bpfMapCount: maps?.length ?? 0,
    notes,
    cilium,
  };
}
