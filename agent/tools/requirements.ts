/**
 * The one list of binaries the agent needs on its PATH, with why, and whether a
 * node without it is broken (required) or only runs less (optional: a built-in
 * or another tool stands in, or nothing in the agent drives it yet). The
 * preflight (`cni-bench doctor`) checks it, and test/unit/dockerfile.test.ts
 * holds the Dockerfile to installing every entry.
 */
import { probe, versionProbes, type VersionProbe } from './versions.js';

export interface Requirement {
  binary: string;
  /** What the agent (or the lab) uses it for; printed by doctor. */
  why: string;
  required: boolean;
  /** How to ask it for its version. */
  probe: VersionProbe;
}

type Own = readonly [args: string[], version: RegExp];

/** Discovery's probe for `binary` (agent/tools/versions.ts), else one from `own`. */
function probeFor(binary: string, own?: Own): VersionProbe {
  const known = versionProbes.find((p) => p.binary === binary);
  if (known) return known;
  if (!own) throw new Error(`requirements: no version probe for ${binary}`);
  return probe(binary, binary, own[0], own[1]);
}

const IPTABLES_SAVE: Own = [['--version'], /^iptables(?:-nft|-legacy)?-save v(\d+\.\d+\.\d+)/m];
const PROCPS: Own = [['--version'], /from procps-ng (\d+\.\d+(?:\.\d+)?)/];
const IPROUTE2: Own = [['-V'], /iproute2-(?:ss)?(\d+(?:\.\d+)+)/];
const NETPERF: Own = [['-V'], /Netperf version (\d+\.\d+\.\d+)/];

const need = (binary: string, why: string, own?: Own): Requirement => Object.freeze({ binary, why, required: true, probe: probeFor(binary, own) });
const want = (binary: string, why: string, own?: Own): Requirement => Object.freeze({ binary, why, required: false, probe: probeFor(binary, own) });

export const requirements: readonly Requirement[] = Object.freeze([
  need('iperf3', 'TCP and UDP throughput, client and server; nothing built in replaces it'),
  need('fortio', "fixed-rate HTTP latency as the study measured it; also the HTTP server, and TCP_RR where sockperf is missing"),
  need('nsenter', 'runs every dataplane reader inside the host network namespace', [['--version'], /util-linux (\d+\.\d+(?:\.\d+)?)/]),
  need('ip', 'the route and link a measurement leaves by (link speed)', IPROUTE2),
  need('iptables-legacy-save', "kube-proxy's rules and counters on the legacy backend", IPTABLES_SAVE),
  need('iptables-nft-save', "kube-proxy's rules and counters on the nf_tables backend", IPTABLES_SAVE),
  need('nft', "kube-proxy's nftables ruleset and service map"),
  need('bpftool', 'BPF map totals and the Cilium LB service map'),
  need('cat', 'reads /proc/net counters inside a network namespace through nsenter, and holds the namespace whose /proc/net the dataplane sampler reads', [['--version'], /\(GNU coreutils\) (\d+\.\d+)/]),
  want('wrk', 'maximum-rate HTTP (fortio stands in)'),
  want('sockperf', "TCP_RR latency (fortio's TCP mode, then the built-in tcp-rr, stand in)"),
  want('netperf', 'TCP_RR and TCP_CRR as the reference study measured them (else sockperf, and the built-in tcp-rr for TCP_CRR)', NETPERF),
  want('netserver', 'the netperf server', NETPERF),
  want('iptables', 'the iptables version reported with a run'),
  want('tc', 'link shaping in the lab (cni-bench lab --link-mbit)', IPROUTE2),
  want('ps', 'looking at the agent pod by hand (the agent reads /proc itself)', PROCPS),
  want('conntrack', 'listing conntrack entries by hand (the agent reads fill and drops from /proc/net/stat/nf_conntrack)'),
  want('sysctl', 'changing the conntrack limit by hand (the agent reads /proc/sys itself)', PROCPS),
]);
