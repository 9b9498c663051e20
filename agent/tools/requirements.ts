/**
 * The binaries the agent needs on its PATH, with why, and whether a node
 * without it is broken (required) or only runs less (optional: a built-in or
 * another tool stands in, or nothing in the agent drives it yet): the tool
 * catalogue's binaries, required ones first. The preflight (`cni-bench
 * doctor`) checks them, and test/unit/dockerfile.test.ts holds the Dockerfile
 * to installing every entry.
 */
import { BINARIES } from '../../core/tool-catalogue/index.js';
import { probeOf, type VersionProbe } from './versions.js';

export interface Requirement {
  binary: string;
  /** What the agent (or the lab) uses it for; printed by doctor. */
  why: string;
  required: boolean;
  /** How to ask it for its version. */
  probe: VersionProbe;
}

export const requirements: readonly Requirement[] = Object.freeze(
  [...BINARIES.filter((b) => b.required), ...BINARIES.filter((b) => !b.required)].map((b) =>
    Object.freeze({ binary: b.binary, why: b.why, required: b.required, probe: probeOf(b) }),
  ),
);
