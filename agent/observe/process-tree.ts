/**
 * CPU and memory of a process and all its living descendants, read from /proc
 * (children from /proc/<pid>/task/<tid>/children, CONFIG_PROC_CHILDREN). Used
 * for the agent's servers (the server-saturation guard) and load generators
 * (the client-cpu-saturated guard). Parsing is agent/samplers/proc.ts's.
 */
import { readdir, readFile } from 'node:fs/promises';
import { parseProcStat, parseProcStatus } from '../samplers/proc.js';

/** USER_HZ, the unit of utime/stime (`getconf CLK_TCK`; 100 on Linux). */
const TICKS_PER_SECOND = 100;
/** Bound on the walk, against a fork bomb under the tool. */
const MAX_PROCESSES = 4096;

/** Pids of `pid` and its descendants, parents first. A process that vanished mid-walk is skipped. */
export async function processTree(pid: number, procRoot = '/proc'): Promise<number[]> {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length && out.length < MAX_PROCESSES) {
    const p = queue.shift() as number;
    out.push(p);
    const tasks = await readdir(`${procRoot}/${p}/task`).catch(() => [] as string[]);
    for (const t of tasks) {
      const text = await readFile(`${procRoot}/${p}/task/${t}/children`, 'utf8').catch(() => '');
      for (const c of text.split(/\s+/).filter(Boolean)) queue.push(Number(c));
    }
  }
  return out;
}

export interface TreeUsage {
  /** utime+stime of every living process in the tree, in seconds since each started. */
  cpuSeconds: number;
  rssBytes: number;
  processes: number;
}

/** Rejects when the root process is gone; descendants that exit mid-read are skipped. */
export async function readTreeUsage(pid: number, procRoot = '/proc'): Promise<TreeUsage> {
  const root = parseProcStat(await readFile(`${procRoot}/${pid}/stat`, 'utf8'));
  let ticks = root.utimeTicks + root.stimeTicks;
  let rss = parseProcStatus(await readFile(`${procRoot}/${pid}/status`, 'utf8')).vmRssBytes;
  const tree = await processTree(pid, procRoot);
  for (const p of tree.slice(1)) {
    const [stat, status] = await Promise.all([
      readFile(`${procRoot}/${p}/stat`, 'utf8').catch(() => ''),
      readFile(`${procRoot}/${p}/status`, 'utf8').catch(() => ''),
    ]);
    if (!stat || !status) continue;
    const s = parseProcStat(stat);
    ticks += s.utimeTicks + s.stimeTicks;
    rss += parseProcStatus(status).vmRssBytes;
  }
  return { cpuSeconds: ticks / TICKS_PER_SECOND, rssBytes: rss, processes: tree.length };
}
