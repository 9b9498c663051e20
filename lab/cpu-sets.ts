/**
 * Which CPUs each lab node may use. On a real cluster every node has its own
 * CPUs; in the lab, nodes left free to float over the same cores put a
 * client, its server and the kernel's forwarding for both on whichever core
 * the scheduler picks, phase by phase, and the same measurement moved by a
 * third between phases (short-connection RPS 7,400 then 5,000 req/s with
 * nothing changed). So when the machine has at least as many CPUs as the lab
 * has nodes, each node gets its own disjoint, equal share: its agent is
 * started under `taskset`, the tools it starts inherit the mask, packets a
 * node sends are forwarded on its CPUs, and the tools that program a node's
 * rules run there too, all nodes at once, as each node's kube-proxy would.
 * With fewer CPUs than nodes the nodes share them all (said in the lab's log).
 */
export { allowedCpus, parseCpuList } from '../core/cpu-list.js';

/** Pure: `nodes` disjoint sets of equal size from `cpus` (the rest unused), or undefined when there are fewer CPUs than nodes. */
export function nodeCpuSets(nodes: number, cpus: readonly number[]): number[][] | undefined {
  if (nodes < 1 || cpus.length < nodes) return undefined;
  const each = Math.floor(cpus.length / nodes);
  return Array.from({ length: nodes }, (_, i) => cpus.slice(i * each, (i + 1) * each));
}

/** Pure: `file args` run on the node's CPUs (through taskset) when it has its own, else as they are. */
export function onNodeCpus(
  cpus: readonly number[] | undefined,
  file: string,
  args: readonly string[],
): [string, string[]] {
  return cpus?.length ? ['taskset', ['--cpu-list', cpus.join(','), file, ...args]] : [file, [...args]];
}
