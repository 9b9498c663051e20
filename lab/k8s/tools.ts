/**
 * Where the lab finds the real binaries the set-up scripts build into the
 * tools cache: the control plane (scripts/build-control-plane.sh) and Cilium
 * (scripts/build-cilium.sh). A missing one is an error naming the script.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { join } from 'node:path';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

export const TOOLS_DIR = process.env.CNI_BENCH_TOOLS_DIR ?? '/var/cache/cni-bench/tools';
/** The Cilium release scripts/build-cilium.sh pins. */
export const CILIUM_VERSION = 'v1.20.2';
/** Debian's clang/LLVM 19: Cilium 1.20 needs >= 18.1 to compile its datapath at run time. */
export const LLVM_BIN = '/usr/lib/llvm-19/bin';

/** What scripts/build-control-plane.sh puts in the cache's bin/ (the lab runs the first three; the test harness all). */
export type LabTool =
  | 'etcd'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kube-proxy'
  | 'kwok'
  | 'helm'
  | 'promtool';

export function labToolPath(name: LabTool): string {
  const path = join(TOOLS_DIR, 'bin', name);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new CniBenchError(
      ErrorCodes.LAB,
      `${path} is missing; build it with 'bash scripts/setup.sh --cilium' (or scripts/build-control-plane.sh; CNI_BENCH_TOOLS_DIR=${TOOLS_DIR})`,
      { details: { tool: name } },
    );
  }
  return path;
}

export interface CiliumBuild {
  dir: string;
  agent: string;
  cni: string;
  dbg: string;
  /** The agent's datapath sources (copied per node: the agent writes into its lib-dir). */
  bpf: string;
  crds: string;
}

/** The Cilium build, once scripts/build-cilium.sh has finished it (its .complete marker). */
export function ciliumBuild(): CiliumBuild {
  const dir = join(TOOLS_DIR, `cilium-${CILIUM_VERSION}`);
  if (!existsSync(join(dir, '.complete'))) {
    throw new CniBenchError(
      ErrorCodes.LAB,
      `Cilium ${CILIUM_VERSION} is not built in ${dir}; run 'bash scripts/setup.sh --cilium' (or scripts/build-cilium.sh)`,
      { details: { tool: 'cilium' } },
    );
  }
  if (!existsSync(join(LLVM_BIN, 'clang'))) {
    throw new CniBenchError(
      ErrorCodes.LAB,
      `${LLVM_BIN}/clang is missing: Cilium ${CILIUM_VERSION} compiles its datapath with clang >= 18.1; run 'bash scripts/setup.sh --cilium' (installs clang-19 llvm-19 ipset)`,
      { details: { tool: 'clang' } },
    );
  }
  return {
    dir,
    agent: join(dir, 'cilium-agent'),
    cni: join(dir, 'cilium-cni'),
    dbg: join(dir, 'cilium-dbg'),
    bpf: join(dir, 'bpf'),
    crds: join(dir, 'crds'),
  };
}
