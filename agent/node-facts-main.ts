#!/usr/bin/env node
/**
 * Prints this host's fingerprint as one JSON object on stdout and exits. The
 * agent runs it once as a child (agent/node-facts.ts), so systeminformation's
 * code and buffers never stay in the agent's own heap: the agent's monitoring
 * budget is 80 MiB RSS, and loading the library in-process costs several MiB.
 * Argument: the pod IP whose interface is described.
 */
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { basename } from 'node:path';
import si from 'systeminformation';

const podIp = process.argv[2] ?? '';
const notes: string[] = [];
const settle = async <T>(what: string, p: Promise<T>): Promise<T | undefined> =>
  p.catch((err: Error) => {
    notes.push(`${what}: ${err.message}`);
    return undefined;
  });

const [cpu, system, os, mem, nets] = await Promise.all([
  settle('cpu', si.cpu()),
  settle('system', si.system()),
  settle('os', si.osInfo()),
  settle('memory', si.mem()),
  settle('network', si.networkInterfaces()),
]);
const list = nets === undefined ? [] : Array.isArray(nets) ? nets : [nets];
const nic = list.find((n) => podIp && n.ip4 === podIp) ?? list.find((n) => n.default);
if (!nic) notes.push(`network: no interface holds ${podIp || 'the pod IP'}`);

/** The NIC's kernel driver; for an interface without a device, its kind as sysfs shows it. */
function driverOf(iface: string): string {
  const sys = `/sys/class/net/${iface}`;
  try {
    return basename(readlinkSync(`${sys}/device/driver`));
  } catch {
    if (existsSync(`${sys}/bridge`)) return 'bridge';
    const read = (f: string): string => readFileSync(`${sys}/${f}`, 'utf8').trim();
    try {
      // A veth's iflink is its peer's index (a physical or standalone interface links to itself).
      return read('iflink') !== read('ifindex') ? 'veth' : 'virtual';
    } catch {
      return '';
    }
  }
}

const facts = {
  cpuModel: [cpu?.manufacturer, cpu?.brand].filter(Boolean).join(' '),
  physicalCores: cpu?.physicalCores ?? 0,
  threads: cpu?.cores ?? 0,
  governor: cpu?.governor ?? '',
  virtualization: system === undefined ? '' : system.virtual ? system.virtualHost || 'virtual machine' : 'none',
  os: os ? [os.distro, os.release, os.codename ? `(${os.codename})` : ''].filter(Boolean).join(' ') : '',
  memoryBytes: mem?.total ?? 0,
  podInterface: nic?.iface ?? '',
  nicDriver: nic ? driverOf(nic.iface) : '',
  nicSpeedMbps: nic?.speed && nic.speed > 0 ? Math.round(nic.speed) : 0,
  mtu: nic?.mtu ?? 0,
  notes,
};
process.stdout.write(`${JSON.stringify(facts)}\n`);
