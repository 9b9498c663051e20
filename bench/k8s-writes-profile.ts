/**
 * Where the time goes while a sweep step writes its dummy Services on the
 * Cilium lab (the collector's own write path: KubernetesServiceFrontend
 * through the lab's real kube-apiserver, etcd and two cilium-agents): for each
 * phase (0 -> N, N -> 2N, then 2N -> 0 by delete-collection) the wall time and
 * objects/s; CPU seconds of every process in the lab's namespaces, of this
 * process and of the rest of the machine (/proc); and the apiserver's own
 * metrics over the phase: requests and their mean latency by verb and
 * resource, etcd requests by operation and type, API Priority and Fairness
 * (queue waits and rejections by priority level), watch events sent by
 * resource, and the stored objects by resource (what one Service costs).
 * Prints; asserts nothing. Load average beside every phase.
 *
 *   npm run bench:k8s-writes-profile -- [--services 5000] [--save-metrics DIR]
 *     [--variant default --variant gogc400:GOGC=400 ...]  (one fresh lab each, side by side)
 *   npm run bench:k8s-writes-profile -- --compare-static-ip [--services 3000] [--rounds 2]
 *     (one lab: the lab's frontend, dynamic ClusterIPs, against the same frontend class asking
 *      for the lab's dummy ClusterIPs, alternately, 0 -> N and back each time)
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { KubernetesServiceFrontend } from '../collector/index.js';
import { createLogger } from '../core/log.js';
import { dummyClusterIp, Lab } from '../lab/index.js';
import { commandLine, machineFacts, writeFindings } from './findings.js';
import { type CpuSnapshot, cpuSnapshot, deltaCpu, labNamespaces } from './proc-cpu.js';
import { deltaOf, type PromSample, parsePromText, sumBy } from './prom-text.js';

const { values } = parseArgs({
  options: {
    services: { type: 'string', default: '5000' },
    endpoints: { type: 'string', default: '4' },
    'save-metrics': { type: 'string' },
    variant: { type: 'string', multiple: true },
    'compare-static-ip': { type: 'boolean', default: false },
    rounds: { type: 'string', default: '2' },
  },
});
const N = Number(values.services);
const EPS = Number(values.endpoints);
const RUN_ID = 'profile';

interface Snap {
  cpu: CpuSnapshot;
  metrics: PromSample[];
  load: number;
}

const load1 = (): number => loadavg()[0] ?? 0;
const f1 = (n: number): string => n.toFixed(1);
const ms = (sum: number, count: number): string => (count > 0 ? ((1000 * sum) / count).toFixed(1) : '-');

/** Mean latency rows of a _sum/_count histogram pair grouped by `by`, largest total first. */
function latencyRows(a: Snap, b: Snap, base: string, by: string[], top: number): string[] {
  const sum = deltaOf(sumBy(a.metrics, `${base}_sum`, by), sumBy(b.metrics, `${base}_sum`, by));
  const count = deltaOf(sumBy(a.metrics, `${base}_count`, by), sumBy(b.metrics, `${base}_count`, by));
  return [...count]
    .filter(([, c]) => c > 0)
    .sort((x, y) => (sum.get(y[0]) ?? 0) - (sum.get(x[0]) ?? 0))
    .slice(0, top)
    .map(([k, c]) => `| ${k} | ${c} | ${ms(sum.get(k) ?? 0, c)} | ${f1(sum.get(k) ?? 0)} |`);
}

/** Stored objects by resource (the gauge was renamed in 1.34; both names are read). */
function objects(s: Snap): Map<string, number> {
  const out = sumBy(s.metrics, 'apiserver_storage_objects', ['resource']);
  for (const [k, v] of sumBy(s.metrics, 'apiserver_resource_objects', ['resource'])) out.set(k, v);
  return out;
}

const DISPATCHED = 'apiserver_flowcontrol_dispatched_requests_total';
const ALLOC = 'kube_apiserver_clusterip_allocator_allocation';

/** Mean ms of the apiserver's ClusterIP allocations in a window (dynamic ones run under one lock per range). */
function allocationMs(a: Snap, b: Snap): { ms: number; totalS: number; byScope: Map<string, number> } {
  const sum = (s: Snap, n: string) => sumBy(s.metrics, n, []).get('') ?? 0;
  const totalS = sum(b, `${ALLOC}_duration_seconds_sum`) - sum(a, `${ALLOC}_duration_seconds_sum`);
  const count = sum(b, `${ALLOC}_duration_seconds_count`) - sum(a, `${ALLOC}_duration_seconds_count`);
  const byScope = deltaOf(sumBy(a.metrics, `${ALLOC}_total`, ['scope']), sumBy(b.metrics, `${ALLOC}_total`, ['scope']));
  return { ms: count ? (1000 * totalS) / count : 0, totalS, byScope };
}

function allocatorLine(a: Snap, b: Snap, wallS: number): string {
  const al = allocationMs(a, b);
  return `ClusterIP allocations: ${[...al.byScope].map(([k, v]) => `${k} ${v}`).join(', ')}; mean ${al.ms.toFixed(1)} ms each, ${f1(al.totalS)} s in all (${((100 * al.totalS) / wallS).toFixed(0)}% of the phase's wall time).`;
}

function phaseReport(name: string, services: number, a: Snap, b: Snap): string[] {
  const cpu = deltaCpu(a.cpu, b.cpu);
  const objs = deltaOf(objects(a), objects(b));
  const changed = [...objs].filter(([, v]) => v !== 0).sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]));
  const rejected = [
    ...deltaOf(
      sumBy(a.metrics, 'apiserver_flowcontrol_rejected_requests_total', ['priority_level', 'reason']),
      sumBy(b.metrics, 'apiserver_flowcontrol_rejected_requests_total', ['priority_level', 'reason']),
    ),
  ].filter(([, v]) => v > 0);
  const watch = [
    ...deltaOf(
      sumBy(a.metrics, 'apiserver_watch_events_total', ['resource']),
      sumBy(b.metrics, 'apiserver_watch_events_total', ['resource']),
    ),
  ]
    .filter(([, v]) => v > 0)
    .sort((x, y) => y[1] - x[1])
    .slice(0, 6);
  const perSvc = (s: number): string => (services ? `${((1000 * s) / Math.abs(services)).toFixed(2)}` : '-');
  return [
    `### ${name}`,
    '',
    `${Math.abs(services)} Services (+ their EndpointSlices) in ${f1(cpu.wallS)} s: ${f1((2 * Math.abs(services)) / cpu.wallS)} objects/s; load average (1 min) ${f1(a.load)} -> ${f1(b.load)}; the machine's ${f1(cpu.cores)} CPUs were busy ${f1(cpu.machineBusyS)} CPU-s of ${f1(cpu.cores * cpu.wallS)}.`,
    '',
    '| process (namespace, comm) | CPU s | cores | CPU ms per Service |',
    '|---|---:|---:|---:|',
    ...cpu.groups.map(([k, v]) => `| ${k} | ${f1(v)} | ${(v / cpu.wallS).toFixed(2)} | ${perSvc(v)} |`),
    `| everything else on the machine (other labs) | ${f1(cpu.otherS)} | ${(cpu.otherS / cpu.wallS).toFixed(2)} | - |`,
    '',
    '| apiserver request (verb resource) | count | mean ms | total s |',
    '|---|---:|---:|---:|',
    ...latencyRows(a, b, 'apiserver_request_duration_seconds', ['verb', 'resource'], 8),
    '',
    '| etcd request (operation resource) | count | mean ms | total s |',
    '|---|---:|---:|---:|',
    ...latencyRows(a, b, 'etcd_request_duration_seconds', ['operation', 'resource'], 8),
    '',
    '| APF priority level: queue wait | count | mean ms | total s |',
    '|---|---:|---:|---:|',
    ...latencyRows(a, b, 'apiserver_flowcontrol_request_wait_duration_seconds', ['priority_level', 'execute'], 6),
    '',
    allocatorLine(a, b, cpu.wallS),
    `APF dispatches by priority level: ${[...deltaOf(sumBy(a.metrics, DISPATCHED, ['priority_level']), sumBy(b.metrics, DISPATCHED, ['priority_level']))].map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}.`,
    `APF rejections: ${rejected.length ? rejected.map(([k, v]) => `${k} ${v}`).join(', ') : 'none'}.`,
    `Stored objects changed: ${changed.map(([k, v]) => `${k} ${v > 0 ? '+' : ''}${v}`).join(', ') || 'none'}.`,
    `Watch events sent: ${watch.map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}.`,
    '',
  ];
}

interface Variant {
  name: string;
  /** Environment the lab's processes inherit (Go's GOGC, for one), set only while this variant's lab runs. */
  env: Record<string, string>;
}

/** Pure: `name[:KEY=VAL,KEY=VAL]`. */
function parseVariant(text: string): Variant {
  const [name = '', rest] = text.split(/:(.*)/s);
  if (!/^[\w.-]+$/.test(name)) throw new Error(`--variant: '${text}' must start with a name of letters, digits, . - _`);
  const env: Record<string, string> = {};
  for (const kv of rest ? rest.split(',') : []) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(kv);
    if (!m) throw new Error(`--variant ${name}: '${kv}' is not KEY=VALUE`);
    env[m[1] as string] = m[2] as string;
  }
  return { name, env };
}

interface PhaseFigures {
  phase: string;
  objectsPerS: number;
  wallS: number;
  load: number;
  /** CPU ms per Service by process group. */
  perService: Map<string, number>;
}

const log = createLogger({ bench: 'k8s-writes-profile' }, 'warn');

async function profileLab(variant: Variant, lines: string[]): Promise<PhaseFigures[]> {
  const saved = new Map(Object.keys(variant.env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, variant.env);
  const out: PhaseFigures[] = [];
  let lab: Lab | undefined;
  try {
    lab = await Lab.create({ nodes: 2, log, proxy: { mode: 'cilium' } });
    const cp = (lab.services as unknown as { controlPlane?: { getText(p: string): Promise<string> } }).controlPlane;
    if (!cp) throw new Error('k8s-writes-profile: the Cilium lab has no control plane');
    const ns = labNamespaces(lab.plan);
    let n = 0;
    const snap = async (): Promise<Snap> => {
      const text = await cp.getText('/metrics');
      if (values['save-metrics'])
        writeFileSync(join(values['save-metrics'], `apiserver-metrics-${variant.name}-${n++}.txt`), text);
      return { cpu: cpuSnapshot(ns), metrics: parsePromText(text), load: load1() };
    };
    lines.push(
      `## ${variant.name}${
        Object.keys(variant.env).length
          ? ` (${Object.entries(variant.env)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')} for every process of the lab)`
          : ''
      }`,
      '',
    );
    const phases: [string, number][] = [
      [`0 -> ${N}`, N],
      [`${N} -> ${2 * N}`, 2 * N],
      [`${2 * N} -> 0 (delete-collection by label)`, 0],
    ];
    let count = 0;
    for (const [name, target] of phases) {
      const a = await snap();
      await lab.services.setDummyServices(target, EPS, RUN_ID);
      const b = await snap();
      const services = Math.abs(target - count);
      const report = phaseReport(name, target - count, a, b);
      const cpu = deltaCpu(a.cpu, b.cpu);
      out.push({
        phase: name,
        objectsPerS: (2 * services) / cpu.wallS,
        wallS: cpu.wallS,
        load: b.load,
        perService: new Map(cpu.groups.map(([k, v]) => [k, (1000 * v) / services])),
      });
      count = target;
      console.log(report.join('\n'));
      lines.push(...report);
    }
  } finally {
    await lab?.destroy();
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  return out;
}

/** The lab frontend's pacing (lab/cilium/dataplane.ts LAB_PACER): 32 in flight, no client-side rate limit to speak of. */
const LAB_PACING = { qps: 2000, burst: 2000, parallelism: 32, maxRetries: 8, baseDelayMs: 200, maxDelayMs: 10_000 };

interface LabControl {
  getText(p: string): Promise<string>;
  adminKubeconfig: string;
}

/** One lab: dynamic (the lab's own frontend) and requested ClusterIPs (the same class with dummyClusterIp), alternately. */
async function compareStaticIp(lines: string[]): Promise<string[]> {
  const rounds = Number(values.rounds);
  const lab = await Lab.create({ nodes: 2, log, proxy: { mode: 'cilium' } });
  const rows: string[] = [];
  const rate: Record<'dynamic' | 'requested', number[]> = { dynamic: [], requested: [] };
  try {
    const cp = (lab.services as unknown as { controlPlane?: LabControl }).controlPlane;
    if (!cp) throw new Error('k8s-writes-profile: the Cilium lab has no control plane');
    const kc = new KubeConfig();
    kc.loadFromFile(cp.adminKubeconfig);
    const requested = new KubernetesServiceFrontend(kc, {
      namespace: 'cni-bench',
      sweepNamespace: 'cni-bench-sweep',
      pacer: LAB_PACING,
      dummyClusterIp,
      log,
    });
    const ns = labNamespaces(lab.plan);
    const snap = async (): Promise<Snap> => ({
      cpu: cpuSnapshot(ns),
      metrics: parsePromText(await cp.getText('/metrics')),
      load: load1(),
    });
    rows.push(
      `## Dynamic against requested ClusterIPs, one lab, ${N} Services (+ EndpointSlices) each time, alternately`,
      '',
      '| round | ClusterIPs | create objects/s | POST services mean ms | ClusterIP allocation mean ms | kube-apiserver CPU ms per Service | remove objects/s | load (1 min) |',
      '|---:|---|---:|---:|---:|---:|---:|---:|',
    );
    for (let r = 1; r <= rounds; r++) {
      for (const kind of ['dynamic', 'requested'] as const) {
        const writer = kind === 'dynamic' ? lab.services : requested;
        const a = await snap();
        await writer.setDummyServices(N, EPS, `${RUN_ID}-${kind}-${r}`);
        const b = await snap();
        await writer.setDummyServices(0, EPS);
        const c = await snap();
        const up = deltaCpu(a.cpu, b.cpu);
        const down = deltaCpu(b.cpu, c.cpu);
        const apiserver = up.groups.find(([k]) => k === 'fabric kube-apiserver')?.[1] ?? 0;
        const sum = deltaOf(
          sumBy(a.metrics, 'apiserver_request_duration_seconds_sum', ['verb', 'resource']),
          sumBy(b.metrics, 'apiserver_request_duration_seconds_sum', ['verb', 'resource']),
        ).get('POST services');
        const count = deltaOf(
          sumBy(a.metrics, 'apiserver_request_duration_seconds_count', ['verb', 'resource']),
          sumBy(b.metrics, 'apiserver_request_duration_seconds_count', ['verb', 'resource']),
        ).get('POST services');
        rate[kind].push((2 * N) / up.wallS);
        rows.push(
          `| ${r} | ${kind} | ${((2 * N) / up.wallS).toFixed(0)} | ${ms(sum ?? 0, count ?? 0)} | ${allocationMs(a, b).ms.toFixed(1)} | ${((1000 * apiserver) / N).toFixed(2)} | ${((2 * N) / down.wallS).toFixed(0)} | ${f1(b.load)} |`,
        );
        console.log(rows.at(-1));
      }
    }
  } finally {
    await lab.destroy();
  }
  const median = (xs: number[]): number => {
    const o = [...xs].sort((x, y) => x - y);
    const m = o.length >> 1;
    return o.length % 2 ? (o[m] as number) : ((o[m - 1] as number) + (o[m] as number)) / 2;
  };
  rows.push(
    '',
    `Requested over dynamic ClusterIPs, creates, medians of the rounds: ${(median(rate.requested) / median(rate.dynamic)).toFixed(2)}x.`,
    '',
  );
  lines.push(...rows);
  return rows;
}

if (values['compare-static-ip']) {
  const lines: string[] = [];
  await compareStaticIp(lines);
  const text = [...lines, ...machineFacts(), `- command: ${commandLine('k8s-writes-profile')}`].join('\n');
  console.log(text);
  await writeFindings({
    bench: 'k8s-writes-static-ip',
    title: 'Sweep writes: dynamic against requested ClusterIPs (Cilium lab)',
    body: text,
  });
  process.exit(0);
}

const variants = (values.variant ?? ['default']).map(parseVariant);
const lines: string[] = [
  `Cilium lab, 2 nodes each on its own core (as \`lab sweep\` runs), the collector's KubernetesServiceFrontend writing dummy Services of ${EPS} endpoints (Service + EndpointSlice, 32 in flight) as a sweep step does; the cni-bench agents are not started (a sweep's agents sample nothing while a step is written). One fresh lab per variant, one after the other.`,
  '',
];
const results: [Variant, PhaseFigures[]][] = [];
for (const v of variants) results.push([v, await profileLab(v, lines)]);
const side: string[] = [];
if (results.length > 1) {
  const [base, baseFigures] = results[0] as [Variant, PhaseFigures[]];
  side.push(
    '## Side by side',
    '',
    `| variant | phase | objects/s | wall s | load | vs ${base.name} |`,
    '|---|---|---:|---:|---:|---:|',
  );
  for (const [v, figures] of results)
    for (const [i, f] of figures.entries())
      side.push(
        `| ${v.name} | ${f.phase} | ${f.objectsPerS.toFixed(0)} | ${f1(f.wallS)} | ${f1(f.load)} | ${(f.objectsPerS / (baseFigures[i]?.objectsPerS ?? Number.NaN)).toFixed(2)}x |`,
      );
  side.push('');
}
const text = [...lines, ...side, ...machineFacts(), `- command: ${commandLine('k8s-writes-profile')}`].join('\n');
console.log(side.join('\n'));
await writeFindings({
  bench: 'k8s-writes-profile',
  title: "Where a sweep step's API writes spend their time (Cilium lab)",
  body: text,
});
