/**
 * Where the harness finds the real Kubernetes binaries that
 * scripts/build-control-plane.sh builds into the tools cache. A missing binary
 * is an error that names the script, never a skipped test.
 */
import { accessSync, constants, readdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const TOOLS_DIR = process.env.CNI_BENCH_TOOLS_DIR ?? '/var/cache/cni-bench/tools';

export type HarnessTool =
  | 'etcd'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kube-proxy'
  | 'kwok'
  | 'helm'
  | 'promtool';

export function toolPath(name: HarnessTool): string {
  const path = join(TOOLS_DIR, 'bin', name);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `harness: ${path} is missing; build it with 'bash scripts/build-control-plane.sh' (CNI_BENCH_TOOLS_DIR=${TOOLS_DIR})`,
    );
  }
  return path;
}

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
