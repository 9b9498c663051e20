/**
 * Each Cilium lab node's own cgroup2 subtree, <cgroup2>/cni-bench/<lab id>/n<i>,
 * as each kind node has its own: the node's cilium-agent runs in a cgroup
 * namespace rooted there, so its socket load balancer attaches to the node's
 * subtree and never to the machine's root cgroup; the node's pod processes run
 * in n<i>/pods below it, so their connect() calls meet that node's hooks.
 * Removal kills whatever is left (cgroup.kill) and removes the directories,
 * which detaches any program still attached to them.
 */
import { existsSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

/** Pure: where cgroup2 is mounted, from /proc/self/mountinfo text (field 5 mount point; fstype after " - "). */
export function cgroup2MountFrom(mountinfo: string): string | undefined {
  for (const line of mountinfo.split('\n')) {
    const [pre, post] = line.split(' - ');
    if (!pre || !post) continue;
    if (post.split(' ')[0] === 'cgroup2') return pre.split(' ')[4];
  }
  return undefined;
}

export function cgroup2Root(): string {
  const root = cgroup2MountFrom(readFileSync('/proc/self/mountinfo', 'utf8'));
  if (!root)
    throw new CniBenchError(
      ErrorCodes.LAB,
      "no cgroup2 hierarchy is mounted (/proc/self/mountinfo): the Cilium lab needs one for each node's socket load balancer",
    );
  return root;
}

const LABS_DIR = 'cni-bench';

export function labCgroupDir(id: string, root = cgroup2Root()): string {
  return join(root, LABS_DIR, id);
}

export function nodeCgroupDir(id: string, node: number, root = cgroup2Root()): string {
  return join(labCgroupDir(id, root), `n${node}`);
}

/** Where a node's pod processes go. */
export function podCgroupDir(id: string, node: number, root = cgroup2Root()): string {
  return join(nodeCgroupDir(id, node, root), 'pods');
}

export async function createLabCgroups(id: string, nodes: number): Promise<void> {
  for (let i = 0; i < nodes; i++) await mkdir(podCgroupDir(id, i), { recursive: true });
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(dir, d.name));
  } catch {
    return [];
  }
}

function removeTree(dir: string): void {
  for (const d of subdirs(dir)) removeTree(d);
  rmdirSync(dir);
}

/** Kills every process left in the lab's subtree and removes it. No-op when it is not there. */
export async function removeLabCgroups(id: string, root = cgroup2Root()): Promise<void> {
  const dir = labCgroupDir(id, root);
  if (!existsSync(dir)) return;
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
  } catch {
    // cgroup.kill needs Linux 5.14; the namespaces' cleanup kills the processes anyway.
  }
  let last: unknown;
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      removeTree(dir);
      try {
        rmdirSync(join(root, LABS_DIR)); // the shared parent, once no lab uses it
      } catch {
        // another lab's subtree is still there
      }
      return;
    } catch (err) {
      last = err;
      await sleep(100);
    }
  }
  throw new CniBenchError(ErrorCodes.LAB, `cannot remove cgroup ${dir}: ${(last as Error).message}`, { cause: last });
}

/** Lab ids with a cgroup subtree. */
export function labCgroupIds(root = cgroup2Root()): string[] {
  return subdirs(join(root, LABS_DIR)).map((d) => d.slice(d.lastIndexOf('/') + 1));
}

/** Puts process `pid` into a cgroup directory. */
export function joinCgroup(dir: string, pid: number): void {
  writeFileSync(join(dir, 'cgroup.procs'), String(pid));
}
