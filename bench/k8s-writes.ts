/**
 * What a sweep step's API writes cost against the Cilium lab's real
 * kube-apiserver (its cilium-agents watching), side by side in one lab:
 * N selector-less Services with their EndpointSlices created 32 at a time and
 * then removed, alternately the way the collector did it before (the stock
 * @kubernetes/client-node KubeConfig: a new TLS connection per call; one
 * delete per object) and the way it does now (reuseConnections: keep-alive
 * connections; two delete-collection calls by label). Prints each round's
 * objects per second and the ratio of the medians; asserts nothing. The
 * dataplane side (from the first write until every node's Cilium holds the
 * step) is the sweep report's programming latency.
 *
 *   npm run bench:k8s-writes -- [--services 1000] [--rounds 2]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { CoreV1Api, DiscoveryV1Api, KubeConfig } from '@kubernetes/client-node';
import { reuseConnections } from '../collector/index.js';
import { createLogger } from '../core/log.js';
import { Lab } from '../lab/index.js';
import { commandLine, machineFacts, writeFindings } from './findings.js';

const { values } = parseArgs({
  options: { services: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '2' } },
});
const N = Number(values.services);
const ROUNDS = Number(values.rounds);
const IN_FLIGHT = 32;
const NS = 'cni-bench-sweep';
const LABEL = 'cni-bench.io/bench=k8s-writes';

/** Runs `task(i)` for i < n with at most IN_FLIGHT at once. */
async function pool(n: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(IN_FLIGHT, n) }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

function pair(i: number) {
  const name = `bench-${i}`;
  const labels = { 'cni-bench.io/bench': 'k8s-writes' };
  return {
    service: {
      metadata: { name, labels },
      spec: { type: 'ClusterIP', ports: [{ name: 'p', port: 80, protocol: 'TCP', targetPort: 10_000 }] },
    },
    slice: {
      metadata: { name, labels: { ...labels, 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [`198.18.${128 + (i >> 8)}.${i & 255}`], conditions: { ready: true } }],
      ports: [{ name: 'p', port: 10_000, protocol: 'TCP' }],
    },
  };
}

async function round(kubeconfig: string, pooled: boolean): Promise<{ createS: number; deleteS: number }> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  if (pooled) reuseConnections(kc);
  const core = kc.makeApiClient(CoreV1Api);
  const disc = kc.makeApiClient(DiscoveryV1Api);
  const t0 = performance.now();
  await pool(N, async (i) => {
    const p = pair(i);
    await core.createNamespacedService({ namespace: NS, body: p.service });
    await disc.createNamespacedEndpointSlice({ namespace: NS, body: p.slice });
  });
  const t1 = performance.now();
  if (pooled) {
    await core.deleteCollectionNamespacedService({ namespace: NS, labelSelector: LABEL });
    await disc.deleteCollectionNamespacedEndpointSlice({ namespace: NS, labelSelector: LABEL });
  } else {
    await pool(N, async (i) => {
      await core.deleteNamespacedService({ namespace: NS, name: `bench-${i}` });
      await disc.deleteNamespacedEndpointSlice({ namespace: NS, name: `bench-${i}` });
    });
  }
  const left = (await core.listNamespacedService({ namespace: NS, labelSelector: LABEL })).items.length;
  if (left) throw new Error(`k8s-writes: ${left} Services left after the delete`);
  return { createS: (t1 - t0) / 1000, deleteS: (performance.now() - t1) / 1000 };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const log = createLogger({ bench: 'k8s-writes' }, 'warn');
const lab = await Lab.create({ nodes: 2, log, proxy: { mode: 'cilium' }, shareCpus: true });
const lines: string[] = [];
try {
  const kubeconfig = (lab.services as unknown as { controlPlane?: { adminKubeconfig: string } }).controlPlane
    ?.adminKubeconfig;
  if (!kubeconfig) throw new Error('k8s-writes: the Cilium lab has no control plane');
  const rates: Record<'stock' | 'pooled', { create: number[]; del: number[] }> = {
    stock: { create: [], del: [] },
    pooled: { create: [], del: [] },
  };
  lines.push(
    `${N} Services + ${N} EndpointSlices per round, ${IN_FLIGHT} in flight, against the Cilium lab's kube-apiserver (2 cilium-agents watching)`,
    '',
    '| round | client | create objects/s | delete objects/s | load (1 min) |',
    '|---:|---|---:|---:|---:|',
  );
  for (let r = 1; r <= ROUNDS; r++) {
    for (const kind of ['stock', 'pooled'] as const) {
      const { createS, deleteS } = await round(kubeconfig, kind === 'pooled');
      const c = (2 * N) / createS;
      const d = (2 * N) / deleteS;
      rates[kind].create.push(c);
      rates[kind].del.push(d);
      lines.push(`| ${r} | ${kind} | ${c.toFixed(0)} | ${d.toFixed(0)} | ${loadavg()[0]?.toFixed(1)} |`);
      console.log(lines.at(-1));
    }
  }
  const ratio = (k: 'create' | 'del') => median(rates.pooled[k]) / median(rates.stock[k]);
  lines.push(
    '',
    `Pooled over stock, medians of the rounds: create ${ratio('create').toFixed(2)}x, delete ${ratio('del').toFixed(2)}x.`,
    'stock: a new undici Agent, TCP connection and TLS handshake per call, one DELETE per object (the collector until this change). pooled: reuseConnections (one keep-alive pool) and two delete-collection calls by label (the collector now).',
  );
} finally {
  await lab.destroy();
}
const text = [...lines, '', ...machineFacts(), `- command: ${commandLine('k8s-writes')}`].join('\n');
console.log(text);
await writeFindings({
  bench: 'k8s-writes',
  title: "API write cost of a sweep step (the Cilium lab's apiserver)",
  body: text,
});
