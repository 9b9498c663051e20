/**
 * Checks the agent's requirements (requirements.ts) against a PATH: where each
 * binary is and what version it answers. A binary that is there but whose
 * version probe fails still counts as found; the error says why.
 */
import { asCniBenchError } from '../../core/errors.js';
import { findOnPath, run } from '../../core/process.js';
import { requirements as allRequirements, type Requirement } from './requirements.js';

export interface RequirementCheck {
  binary: string;
  required: boolean;
  why: string;
  found: boolean;
  path: string | null;
  version: string | null;
  /** Why the version is unknown, for a binary that was found. */
  error: string | null;
}

const PROBE_TIMEOUT_MS = 5000;

async function check(req: Requirement, pathEnv: string): Promise<RequirementCheck> {
  const base = { binary: req.binary, required: req.required, why: req.why };
  const path = await findOnPath(req.binary, pathEnv);
  if (!path) return { ...base, found: false, path: null, version: null, error: null };
  try {
    // By name on the same PATH, as the drivers start it: some tools print argv[0]
    // in their version (`/usr/sbin/bpftool v7.1.0`), which the probes do not expect.
    const r = await run(req.binary, req.probe.args, {
      tool: req.binary,
      timeoutMs: PROBE_TIMEOUT_MS,
      okExitCodes: [0, 1, 2],
      env: { PATH: pathEnv },
    });
    return { ...base, found: true, path, version: req.probe.parse(`${r.stdout}\n${r.stderr}`), error: null };
  } catch (err) {
    return { ...base, found: true, path, version: null, error: asCniBenchError(err).message };
  }
}

/** Every requirement checked, in the list's order. */
export function checkRequirements(
  pathEnv = process.env.PATH ?? '',
  list: readonly Requirement[] = allRequirements,
): Promise<RequirementCheck[]> {
  return Promise.all(list.map((req) => check(req, pathEnv)));
}
