/**
 * The hardware a run's numbers came from, as one line for the report's
 * Cluster line and the comparison header: from the node facts each agent
 * reported at registration (agent/node-facts.ts). Pure.
 */
import type { NodeFacts } from '../gen/cnibench/v1/agent.js';

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(bytes >= 10 * 2 ** 30 ? 0 : 1)} GiB`;
}

/** "Intel Xeon Gold 6338, 32 cores / 64 threads, governor performance, bare metal, Debian GNU/Linux 12, 256 GiB; eth0 mlx5_core 100000 Mbit/s MTU 9000". */
export function hardwareLine(f: NodeFacts): string {
  const cpu = [
    f.cpuModel || 'CPU unknown',
    f.physicalCores || f.threads ? `${f.physicalCores} cores / ${f.threads} threads` : '',
    f.governor ? `governor ${f.governor}` : 'no cpufreq governor',
    f.virtualization === 'none' ? 'bare metal' : f.virtualization ? `VM (${f.virtualization})` : '',
    f.os,
    f.memoryBytes ? gib(f.memoryBytes) : '',
  ].filter(Boolean);
  const nic = [
    f.podInterface,
    f.nicDriver,
    f.nicSpeedMbps ? `${f.nicSpeedMbps} Mbit/s` : 'speed unknown',
    f.mtu ? `MTU ${f.mtu}` : '',
  ].filter(Boolean);
  return `${cpu.join(', ')}${f.podInterface ? `; ${nic.join(' ')}` : ''}`;
}

/**
 * The nodes' hardware: one line when every node reported the same, else one
 * per node ("a: ...; b: ..."); undefined when none reported facts.
 */
export function describeHardware(nodes: readonly { name: string; facts: NodeFacts | undefined }[]): string | undefined {
  const byLine = new Map<string, string[]>();
  for (const n of nodes) {
    if (!n.facts) continue;
    const line = hardwareLine(n.facts);
    byLine.set(line, [...(byLine.get(line) ?? []), n.name]);
  }
  const missing = nodes.filter((n) => !n.facts).map((n) => n.name);
  const parts = [...byLine].map(([line, names]) =>
    byLine.size === 1 && !missing.length ? line : `${names.join(', ')}: ${line}`,
  );
  if (!parts.length) return undefined;
  return [...parts, ...(missing.length ? [`${missing.join(', ')}: not reported`] : [])].join(' | ');
}
