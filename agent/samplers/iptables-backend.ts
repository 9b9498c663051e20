/**
 * Chooses the iptables backend the node's kube-proxy uses, the way kube-proxy's
 * image does it (kubernetes-sigs/iptables-wrappers): kubelet's canary chains
 * KUBE-IPTABLES-HINT / KUBE-KUBELET-CANARY in the mangle table say which
 * backend is in use (nft checked first); without them, the backend holding more
 * rules wins, ties going to nft. Pure over the two `-save` outputs; the reader
 * that runs the tools is in dataplane-sampler.ts.
 */
export type IptablesBackend = 'nft' | 'legacy';

const CANARY = /^:(KUBE-IPTABLES-HINT|KUBE-KUBELET-CANARY) /m;

function ruleLines(save: string): number {
  let n = 0;
  for (const line of save.split('\n')) if (line.startsWith('-A ') || /^\[\d+:\d+\] -A /.test(line)) n++;
  return n;
}

function mangleHasCanary(save: string): boolean {
  const start = save.indexOf('*mangle');
  if (start < 0) return false;
  const end = save.indexOf('\nCOMMIT', start);
  return CANARY.test(save.slice(start, end < 0 ? undefined : end));
}

export interface BackendChoice {
  backend: IptablesBackend;
  /** Why: 'canary' or 'rule count n/m'. */
  reason: string;
}

/** `nftSave`/`legacySave`: full `iptables-nft-save` / `iptables-legacy-save` output, or undefined when that tool is missing. */
export function chooseIptablesBackend(nftSave: string | undefined, legacySave: string | undefined): BackendChoice {
  if (nftSave !== undefined && mangleHasCanary(nftSave))
    return { backend: 'nft', reason: 'kubelet canary chain in nft mangle table' };
  if (legacySave !== undefined && mangleHasCanary(legacySave))
    return { backend: 'legacy', reason: 'kubelet canary chain in legacy mangle table' };
  const nft = nftSave === undefined ? -1 : ruleLines(nftSave);
  const legacy = legacySave === undefined ? -1 : ruleLines(legacySave);
  return legacy > nft
    ? { backend: 'legacy', reason: `rules legacy ${legacy} > nft ${nft}` }
    : { backend: 'nft', reason: `rules nft ${nft} >= legacy ${legacy}` };
}
