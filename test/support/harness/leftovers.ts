/**
 * Nothing of a harness outlives its test process: every harness directory
 * records its owner's pid and its components' pids. On normal exit the owner
 * kills its components synchronously; a harness whose owner died (SIGKILL,
 * crash) is killed and removed by the next start.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const HARNESS_PREFIX = 'cni-bench-cp-';
const OWNER_FILE = 'owner.json';

interface OwnerRecord {
  owner: number;
  pids: number[];
}

const live = new Map<string, () => { pid: number }[]>();
let exitHookInstalled = false;

/** True while process `pid` exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True when /proc/<pid>/cmdline mentions the harness directory (guards against pid reuse). */
function belongsTo(pid: number, dir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
  } catch {
    return false;
  }
}

function record(dir: string, components: () => { pid: number }[]): void {
  const rec: OwnerRecord = { owner: process.pid, pids: components().map((c) => c.pid) };
  try {
    writeFileSync(join(dir, OWNER_FILE), JSON.stringify(rec));
  } catch {
    // the directory is being removed
  }
}

/** Tracks a harness so its processes die with this process and a later start can find them. */
export function registerHarness(dir: string, components: () => { pid: number }[]): void {
  live.set(dir, components);
  record(dir, components);
  const timer = setInterval(() => (live.has(dir) ? record(dir, components) : clearInterval(timer)), 500);
  timer.unref();
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const [d, list] of live) {
        for (const c of list()) if (c.pid > 0 && alive(c.pid)) process.kill(c.pid, 'SIGKILL');
        rmSync(d, { recursive: true, force: true });
      }
    });
  }
}

export function unregisterHarness(dir: string): void {
  live.delete(dir);
}

/** Kills and removes harnesses whose owning process is gone. Returns how many were removed. */
export function removeLeftoverHarnesses(root = tmpdir()): number {
  let removed = 0;
  for (const name of readdirSync(root)) {
    if (!name.startsWith(HARNESS_PREFIX)) continue;
    const dir = join(root, name);
    if (live.has(dir)) continue;
    let rec: OwnerRecord | undefined;
    try {
      rec = JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as OwnerRecord;
    } catch {
      rec = undefined;
    }
    if (rec && alive(rec.owner)) continue;
    for (const pid of rec?.pids ?? []) if (pid > 0 && belongsTo(pid, dir)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    removed++;
  }
  return removed;
}
