/**
 * How to ask each tool for its version, and how to read the answer, as the
 * tool catalogue says (core/tool-catalogue/). Pure parsers: an answer that
 * does not look like the tool's is an error naming it.
 */
import { parseError } from '../../core/errors.js';
import { BINARIES, type BinaryFacts, parseVersion } from '../../core/tool-catalogue/index.js';

export interface VersionProbe {
  /** The name discovery reports the version under: the binary's (tools sharing a binary share it). */
  tool: string;
  binary: string;
  args: string[];
  /** Receives stdout and stderr together (some tools print the version on stderr, wrk exits 1). */
  parse(output: string): string;
}

/** The probe of one binary of the catalogue. */
export function probeOf(b: BinaryFacts): VersionProbe {
  return { tool: b.binary, binary: b.binary, args: [...b.probe.args], parse: (output) => parseVersion(b, output) };
}

/** The binaries whose versions the agent reports when it registers. */
export const versionProbes: readonly VersionProbe[] = BINARIES.filter((b) => b.announced).map(probeOf);

/** The backend an iptables binary drives, from `iptables --version` ("(nf_tables)" or "(legacy)"). */
export function parseIptablesBackend(versionOutput: string): 'nft' | 'legacy' {
  const m = /^iptables v[\d.]+ \((nf_tables|legacy)\)/m.exec(versionOutput);
  if (!m) throw parseError('iptables', versionOutput, 'no "(nf_tables)" or "(legacy)" backend in the version');
  return m[1] === 'nf_tables' ? 'nft' : 'legacy';
}
