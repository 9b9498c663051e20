/**
 * The Cilium LB-map preflight as tests see it from outside: each node's loaded
 * cilium_lb4_services_v2 size read with bpftool in its cilium-agent's mount
 * namespace (what the kernel holds, not what cilium-config says), a watcher
 * that records every size seen while a run goes on, and the sweep whose
 * largest step does not fit a 256-entry map.
 */
import type { Logger } from '../../../core/log.js';
import { run } from '../../../core/process.js';
import type { CiliumLab } from '../../../lab/cilium/dataplane.js';
import { Lab } from '../../../lab/lab.js';

/** A 2-node `cilium` lab whose cilium-config sets bpf-lb-map-max to `max`, and its Cilium dataplane. */
export async function smallLbMapLab(log: Logger, max: number): Promise<{ lab: Lab; cilium: CiliumLab }> {
  const lab = await Lab.create({
    nodes: 2,
    log,
    proxy: { mode: 'cilium', ciliumConfig: { 'bpf-lb-map-max': String(max) } },
    shareCpus: true,
  });
  return { lab, cilium: lab.services as unknown as CiliumLab };
}

/** 100 Services x (1 endpoint + frontend + wildcard) = 300 entries on top of each node's own: more than 256. */
export function lbMapSweep(name: string) {
  return {
    name,
    durationSeconds: 1,
    warmupSeconds: 0,
    rounds: 1,
    roundSleepSeconds: 0,
    sampleIntervalMs: 0,
    serviceScale: { steps: [0, 100], endpointsPerService: 1, syncTimeoutSeconds: 180 },
    // TCP_CRR with the built-in client, the sweep's own connection-rate measurement.
    measurements: [{ id: 'crr-service', kind: 'rr', path: 'service', mode: 'crr', tool: 'tcp-rr' }],
  };
}

/** Each node's loaded cilium_lb4_services_v2 max_entries, read with bpftool in its cilium-agent's mount namespace. */
export async function loadedMax(cilium: CiliumLab): Promise<number[]> {
  return Promise.all(
    cilium.ciliumAgents.map(async (a) => {
      const out = await run(
        'nsenter',
        [
          `--mount=/proc/${a.pid}/ns/mnt`,
          '--',
          'bpftool',
          'map',
          'show',
          'pinned',
          '/sys/fs/bpf/tc/globals/cilium_lb4_services_v2',
          '-j',
        ],
        { tool: 'bpftool', timeoutMs: 20_000 },
      ).catch(() => undefined);
      return out ? (JSON.parse(out.stdout) as { max_entries: number }).max_entries : 0;
    }),
  );
}

export interface LoadedMaxWatch {
  /** Every `n<node index>:<max_entries>` read so far. */
  seen: Set<string>;
  /** Stops reading and waits for the read under way. */
  stop(): Promise<void>;
}

/** Reads every node's loaded map size every 500 ms until stopped. */
export function watchLoadedMax(cilium: CiliumLab): LoadedMaxWatch {
  const seen = new Set<string>();
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      for (const [i, m] of (await loadedMax(cilium)).entries()) seen.add(`n${i}:${m}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return {
    seen,
    async stop() {
      watching = false;
      await watcher;
    },
  };
}
