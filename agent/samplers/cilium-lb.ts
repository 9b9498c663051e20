/**
 * Decodes Cilium's IPv4 load-balancer maps from raw `bpftool map dump -j`
 * bytes, by the layouts of Cilium v1.20.2 (pkg/loadbalancer/maps/types.go,
 * bpf/lib/lb.h): which frontends a node has and whether each has all its
 * backends, and the socket-LB counter that shows translation happened. Pure;
 * a key or value of the wrong size is an error naming bpftool, never a skip.
 */
import { parseError } from '../../core/errors.js';
import type { LbFrontend } from '../../gen/cnibench/v1/agent.js';
import type { DumpEntry } from './bpftool.js';

/** Frontends a sample carries at most (a sweep of 30,000 Services must stay far below gRPC's 4 MiB). */
export const MAX_LB_FRONTENDS = 1000;

/** Map names as pinned under <bpffs>/tc/globals (LIBBPF_PIN_BY_NAME). */
export const CILIUM_MAPS = Object.freeze({
  services: 'cilium_lb4_services_v2',
  backends: 'cilium_lb4_backends_v3',
  reverseSk: 'cilium_lb4_reverse_sk',
  metrics: 'cilium_metrics',
});

/** bpf/lib/common.h: REASON_LB_REVNAT_DELETE, counted by cgroup/sock_release when it deletes a socket's reverse-NAT entry. */
export const REASON_LB_REVNAT_DELETE = 14;
/** enum metric_dir: METRIC_EGRESS. */
export const METRIC_EGRESS = 2;

/** One entry of cilium_lb4_services_v2 (struct lb4_key / lb4_service). */
export interface Lb4ServiceEntry {
  address: string;
  port: number;
  /** 0: the frontend itself; 1..n: its backend slots. */
  slot: number;
  proto: number;
  internalScope: boolean;
  /** Slot > 0: the backend in that slot; slot 0: unused here (union with affinity timeout / L7 port). */
  backendId: number;
  count: number;
  qcount: number;
  revNat: number;
}

export interface Lb4Backend {
  address: string;
  port: number;
  proto: number;
  flags: number;
}

const ip4 = (b: number[], at: number): string => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
const be16 = (b: number[], at: number): number => ((b[at] as number) << 8) | (b[at + 1] as number);
/** Host byte order: little-endian on the machines Cilium runs on (amd64, arm64). */
const le16 = (b: number[], at: number): number => (b[at] as number) | ((b[at + 1] as number) << 8);
const le32 = (b: number[], at: number): number => le16(b, at) + le16(b, at + 2) * 65536;
/** Exact below 2^53, which a packet counter does not reach. */
const le64 = (b: number[], at: number): number => le32(b, at) + le32(b, at + 4) * 2 ** 32;

function sized(map: string, what: string, bytes: number[] | undefined, size: number, i: number): number[] {
  if (!bytes || bytes.length !== size)
    throw parseError(
      'bpftool',
      '',
      `${map} entry ${i}: ${what} has ${bytes?.length ?? 0} bytes, expected ${size} (Cilium v1.20 layout)`,
    );
  return bytes;
}

/** cilium_lb4_services_v2: 12-byte key (be32 addr, be16 dport, u16 slot, u8 proto, u8 scope, 2 pad), 12-byte value. */
export function decodeLb4Services(entries: readonly DumpEntry[]): Lb4ServiceEntry[] {
  return entries.map((e, i) => {
    const k = sized(CILIUM_MAPS.services, 'key', e.key, 12, i);
    const v = sized(CILIUM_MAPS.services, 'value', e.value, 12, i);
    return {
      address: ip4(k, 0),
      port: be16(k, 4),
      slot: le16(k, 6),
      proto: k[8] as number,
      internalScope: k[9] === 1,
      backendId: le32(v, 0),
      count: le16(v, 4),
      // Written in network byte order by the agent (Service4Value.ToNetwork).
      revNat: be16(v, 6),
      qcount: le16(v, 10),
    };
  });
}

/** cilium_lb4_backends_v3: u32 id -> be32 addr, be16 port, u8 proto, u8 flags, u16 cluster_id, u8 zone, u8 pad. */
export function decodeLb4Backends(entries: readonly DumpEntry[]): Map<number, Lb4Backend> {
  const out = new Map<number, Lb4Backend>();
  entries.forEach((e, i) => {
    const k = sized(CILIUM_MAPS.backends, 'key', e.key, 4, i);
    const v = sized(CILIUM_MAPS.backends, 'value', e.value, 12, i);
    out.set(le32(k, 0), { address: ip4(v, 0), port: be16(v, 4), proto: v[6] as number, flags: v[7] as number });
  });
  return out;
}

const PROTOCOLS: Readonly<Record<number, string>> = { 0: 'ANY', 6: 'TCP', 17: 'UDP', 132: 'SCTP' };

export interface LbFrontends {
  frontends: number;
  /** Frontends with at least one backend slot, every slot of `count` present and each slot's backend in the backends map. */
  programmed: number;
  list: LbFrontend[];
  truncated: boolean;
}

/**
 * Groups the services map into frontends (slot 0) with their backends (slots
 * 1..count, resolved through the backends map). A frontend without backends
 * is listed but does not count as programmed: traffic to it would be dropped.
 */
export function lbFrontends(
  services: readonly Lb4ServiceEntry[],
  backends: ReadonlyMap<number, Lb4Backend>,
  max = MAX_LB_FRONTENDS,
): LbFrontends {
  const id = (e: Lb4ServiceEntry): string => `${e.address}:${e.port}/${e.proto}/${e.internalScope ? 'i' : 'e'}`;
  const slots = new Map<string, Map<number, Lb4ServiceEntry>>();
  for (const e of services) {
    if (e.slot === 0) continue;
    const m = slots.get(id(e)) ?? new Map<number, Lb4ServiceEntry>();
    m.set(e.slot, e);
    slots.set(id(e), m);
  }
  // Left out: the wildcard entry (protocol ANY, port 0) Cilium writes per ClusterIP so that
  // its unknown ports are dropped (pkg/loadbalancer/reconciler/bpf_reconciler.go): not a Service.
  const all = services
    .filter((e) => e.slot === 0 && !(e.port === 0 && e.proto === 0))
    .map((f) => {
      const mine = slots.get(id(f));
      const present: string[] = [];
      for (let s = 1; s <= f.count; s++) {
        const b = backends.get(mine?.get(s)?.backendId ?? 0);
        if (b) present.push(`${b.address}:${b.port}`);
      }
      return {
        frontend: {
          address: f.address,
          port: f.port,
          protocol: PROTOCOLS[f.proto] ?? String(f.proto),
          internalScope: f.internalScope,
          backendSlots: f.count,
          backends: present,
        },
        programmed: f.count > 0 && present.length === f.count,
      };
    });
  // Stable order, so a truncated list is the same list from one sample to the next.
  all.sort(
    (a, b) =>
      a.frontend.address.localeCompare(b.frontend.address) ||
      a.frontend.port - b.frontend.port ||
      a.frontend.protocol.localeCompare(b.frontend.protocol),
  );
  return {
    frontends: all.length,
    programmed: all.filter((f) => f.programmed).length,
    list: all.slice(0, max).map((f) => f.frontend),
    truncated: all.length > max,
  };
}

/**
 * cilium_metrics (per-CPU hash; 8-byte key: u8 reason, u8 dir:2, u16 line,
 * u8 file, 3 reserved; value u64 count, u64 bytes): `count` summed over CPUs
 * and over every source line that counted this reason and direction.
 */
export function metricsCount(entries: readonly DumpEntry[], reason: number, dir: number): number {
  let total = 0;
  entries.forEach((e, i) => {
    const k = sized(CILIUM_MAPS.metrics, 'key', e.key, 8, i);
    if (k[0] !== reason || ((k[1] as number) & 0x3) !== dir) return;
    const perCpu = e.values ?? (e.value ? [e.value] : []);
    for (const v of perCpu) total += le64(sized(CILIUM_MAPS.metrics, 'value', v, 16, i), 0);
  });
  return total;
}
