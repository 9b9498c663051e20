/**
 * Which labs are alive. Each lab writes /run/cni-bench/labs/<id>.json with its
 * pid; a lab namespace whose owner is gone (killed with SIGKILL, machine
 * crashed) is a leftover that the next lab removes before it starts.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const STATE_DIR = process.env.CNI_BENCH_RUN_DIR ?? '/run/cni-bench';
const LABS = join(STATE_DIR, 'labs');

export function labRunDir(id: string): string {
  return join(STATE_DIR, id);
}

export async function writeLabState(id: string): Promise<void> {
  await mkdir(LABS, { recursive: true });
  await writeFile(join(LABS, `${id}.json`), JSON.stringify({ id, pid: process.pid, startedMs: Date.now() }));
}

export async function removeLabState(id: string): Promise<void> {
  await rm(join(LABS, `${id}.json`), { force: true });
  await rm(labRunDir(id), { recursive: true, force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Ids of labs whose owning process is still running. */
export async function liveLabIds(): Promise<Set<string>> {
  const ids = new Set<string>();
  const files = await readdir(LABS).catch(() => [] as string[]);
  for (const f of files) {
    const state = await readFile(join(LABS, f), 'utf8').then(
      (t) => JSON.parse(t) as { id: string; pid: number },
      () => undefined,
    );
    if (state && alive(state.pid)) ids.add(state.id);
  }
  return ids;
}
