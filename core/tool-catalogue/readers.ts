/**
 * Binaries that are not load generators: the dataplane readers the agent
 * samples with, the way into a namespace, and what a person uses by hand. They
 * have no driver (each reader's parser lives beside its sampler), so they are
 * one list of binary facts rather than a file each. Debian packages all of them.
 */
import type { BinaryFacts, VersionProbe } from './tool-facts.js';

const IPTABLES_SAVE: VersionProbe = {
  args: ['--version'],
  pattern: /^iptables(?:-nft|-legacy)?-save v(\d+\.\d+\.\d+)/m,
};
const PROCPS: VersionProbe = { args: ['--version'], pattern: /from procps-ng (\d+\.\d+(?:\.\d+)?)/ };
const IPROUTE2: VersionProbe = { args: ['-V'], pattern: /iproute2-(?:ss)?(\d+(?:\.\d+)+)/ };

const reader = (
  binary: string,
  debian: string,
  required: boolean,
  announced: boolean,
  probe: VersionProbe,
  why: string,
): BinaryFacts =>
  Object.freeze({ binary, source: Object.freeze({ debian }), probe: Object.freeze(probe), required, why, announced });

export const readers: readonly BinaryFacts[] = Object.freeze([
  reader(
    'nsenter',
    'util-linux',
    true,
    false,
    { args: ['--version'], pattern: /util-linux (\d+\.\d+(?:\.\d+)?)/ },
    'runs every dataplane reader inside the host network namespace',
  ),
  reader('ip', 'iproute2', true, false, IPROUTE2, 'the route and link a measurement leaves by (link speed)'),
  reader(
    'iptables-legacy-save',
    'iptables',
    true,
    false,
    IPTABLES_SAVE,
    "kube-proxy's rules and counters on the legacy backend",
  ),
  reader(
    'iptables-nft-save',
    'iptables',
    true,
    false,
    IPTABLES_SAVE,
    "kube-proxy's rules and counters on the nf_tables backend",
  ),
  reader(
    'bpftool',
    'bpftool',
    true,
    true,
    { args: ['version'], pattern: /^(?:\S*\/)?bpftool v(\d+\.\d+\.\d+)/m },
    'BPF map totals and the Cilium LB service map',
  ),
  reader(
    'iptables',
    'iptables',
    false,
    true,
    { args: ['--version'], pattern: /^iptables v(\d+\.\d+\.\d+)/m },
    'the iptables version reported with a run',
  ),
  reader(
    'nft',
    'nftables',
    true,
    true,
    { args: ['--version'], pattern: /^nftables v(\d+\.\d+\.\d+)/m },
    "kube-proxy's nftables ruleset and service map",
  ),
  reader(
    'cat',
    'coreutils',
    true,
    false,
    { args: ['--version'], pattern: /\(GNU coreutils\) (\d+\.\d+)/ },
    'reads /proc/net counters inside a network namespace through nsenter, and holds the namespace whose /proc/net the dataplane sampler reads',
  ),
  reader('tc', 'iproute2', false, false, IPROUTE2, 'link shaping in the lab (cni-bench lab --link-mbit)'),
  reader(
    'ping',
    'iputils-ping',
    false,
    false,
    { args: ['-V'], pattern: /^ping from iputils (\d+)/m },
    "the path MTU of each run's paths: don't-fragment probes (ping -M do; agent/observe/pmtu.ts); without it the report says not measured",
  ),
  reader('ps', 'procps', false, false, PROCPS, 'looking at the agent pod by hand (the agent reads /proc itself)'),
  reader(
    'conntrack',
    'conntrack',
    false,
    true,
    { args: ['--version'], pattern: /^conntrack v(\d+\.\d+\.\d+)/m },
    'listing conntrack entries by hand (the agent reads fill and drops from /proc/net/stat/nf_conntrack)',
  ),
  reader(
    'sysctl',
    'procps',
    false,
    false,
    PROCPS,
    'changing the conntrack limit by hand (the agent reads /proc/sys itself)',
  ),
]);
