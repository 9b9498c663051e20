/**
 * Where the harness finds the real Kubernetes binaries that
 * scripts/build-control-plane.sh builds into the tools cache (the lab's lookup,
 * lab/k8s/tools.ts). A missing binary is an error that names the script, never a skipped test.
 */
import { readdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type LabTool, labToolPath } from '../../../lab/k8s/tools.js';

export { TOOLS_DIR } from '../../../lab/k8s/tools.js';
export type HarnessTool = LabTool;

/** The lab's own lookup: a missing binary is an error naming the script that builds it. */
export const toolPath: (name: HarnessTool) => string = labToolPath;

/** kwok's own Stage files for the built version (scripts/build-control-plane.sh copies them beside the binary). */
export function kwokStages(): string[] {
  const dir = join(dirname(realpathSync(toolPath('kwok'))), 'stages');
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  } catch {
    // reported below
  }
  if (!files.length) throw new Error(`harness: no kwok stages in ${dir}; re-run 'bash scripts/build-control-plane.sh'`);
  return files.sort().map((f) => join(dir, f));
}
