/**
 * CPU lists as the kernel writes them ("0-3,6,8-9": Cpus_allowed_list,
 * cpuset files) and the CPUs this process may run on. Both the lab, which
 * divides the machine's CPUs among its nodes, and the agent, which counts the
 * kernel's time on its node's CPUs only, read them.
 */
import { readFile } from 'node:fs/promises';
import { parseError } from './errors.js';

/** Pure: a kernel CPU list such as "0-3,6,8-9" as CPU numbers. */
export function parseCpuList(text: string): number[] {
  const t = text.trim();
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(t))
    throw parseError('Cpus_allowed_list', text, 'expected a CPU list like 0-3,6');
  const out: number[] = [];
  for (const part of t.split(',')) {
    const [a, b] = part.split('-').map(Number) as [number, number | undefined];
    for (let c = a; c <= (b ?? a); c++) out.push(c);
  }
  return out;
}

/** Pure: the CPU list of a /proc/<pid>/status text. */
export function cpusAllowed(status: string): number[] {
  const line = /^Cpus_allowed_list:\s*(.*)$/m.exec(status);
  if (!line) throw parseError('/proc/self/status', status, 'no Cpus_allowed_list line');
  return parseCpuList(line[1] as string);
}

/** The CPUs this process may run on (its affinity, which the lab's nodes divide). */
export async function allowedCpus(): Promise<number[]> {
  return cpusAllowed(await readFile('/proc/self/status', 'utf8'));
}
