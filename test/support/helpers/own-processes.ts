/**
 * The processes a test's own agents started, found through their process
 * trees: other checkouts' labs may run the same tools on the same machine, so
 * a test never looks for a tool by name alone.
 */
import { readFile } from 'node:fs/promises';
import { processTree } from '../../../agent/observe/process-tree.js';

/** The pids among the descendants of `parents` whose command line matches `pattern`. */
export async function descendantsMatching(pattern: RegExp, parents: readonly number[]): Promise<number[]> {
  const out: number[] = [];
  for (const parent of parents)
    for (const pid of (await processTree(parent)).slice(1)) {
      const args = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (pattern.test(args.replaceAll('\0', ' '))) out.push(pid);
    }
  return out;
}

/** Whether any descendant of `parents` runs a command matching `pattern`. */
export async function anyDescendant(pattern: RegExp, parents: readonly number[]): Promise<boolean> {
  return (await descendantsMatching(pattern, parents)).length > 0;
}
