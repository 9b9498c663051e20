/**
 * How to ask each tool for its version, and how to read the answer. Pure
 * parsers: an answer that does not look like the tool's is an error naming it.
 */
import { parseError } from '../../core/errors.js';

export interface VersionProbe {
  tool: string;
  binary: string;
  args: string[];
  /** Receives stdout and stderr together (some tools print the version on stderr, wrk exits 1). */
  parse(output: string): string;
}

/** A probe that runs `binary args` and takes the version from the first group of `re`. */
export function probe(tool: string, binary: string, args: string[], re: RegExp): VersionProbe {
  return {
    tool,
    binary,
    args,
    parse(output: string): string {
      const m = re.exec(output);
      if (!m?.[1]) throw parseError(tool, output, `no version matching ${re}`);
      return m[1];
    },
  };
}

export const versionProbes: readonly VersionProbe[] = [
  probe('iperf3', 'iperf3', ['--version'], /^iperf (\d+\.\d+(?:\.\d+)?)/m),
  probe('wrk', 'wrk', ['-v'], /^wrk (?:debian\/)?(\d+\.\d+\.\d+)/m),
  probe('sockperf', 'sockperf', ['--version'], /^sockperf, version (\d+\.\d+)/m),
  probe('fortio', 'fortio', ['version'], /^(\d+\.\d+\.\d+)/m),
  probe('netperf', 'netperf', ['-V'], /Netperf version (\d+\.\d+\.\d+)/),
  // netserver answers -V with netperf's own line; the plan needs it by name on the server's node.
  probe('netserver', 'netserver', ['-V'], /Netperf version (\d+\.\d+\.\d+)/),
  probe('bpftool', 'bpftool', ['version'], /^(?:\S*\/)?bpftool v(\d+\.\d+\.\d+)/m),
  probe('iptables', 'iptables', ['--version'], /^iptables v(\d+\.\d+\.\d+)/m),
  probe('nft', 'nft', ['--version'], /^nftables v(\d+\.\d+\.\d+)/m),
  probe('conntrack', 'conntrack', ['--version'], /^conntrack v(\d+\.\d+\.\d+)/m),
];

/** The backend an iptables binary drives, from `iptables --version` ("(nf_tables)" or "(legacy)"). */
export function parseIptablesBackend(versionOutput: string): 'nft' | 'legacy' {
  const m = /^iptables v[\d.]+ \((nf_tables|legacy)\)/m.exec(versionOutput);
  if (!m) throw parseError('iptables', versionOutput, 'no "(nf_tables)" or "(legacy)" backend in the version');
  return m[1] === 'nf_tables' ? 'nft' : 'legacy';
}
