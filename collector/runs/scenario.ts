/**
 * The scenario schema: what a run measures, with the defaults of the reference
 * study (shortened for the lab by the caller). One schema serves REST, gRPC and
 * the CLI; every refusal names the field.
 */
import { z } from 'zod';
import { validationError } from '../../core/errors.js';
import { type ClientFacts, clientsOf, findTool, names, orList, serversOf } from '../../core/tool-catalogue/index.js';
import { parseWith } from '../../core/validate.js';
import { conditionsSchema } from './conditions-schema.js';
import {
  DEFAULT_MEASUREMENTS,
  DEFAULT_SCALE_MEASUREMENTS,
  DEFAULT_SCALE_STEPS,
  PATHS,
  type PathName,
} from './scenario-defaults.js';
import { envOverrides } from './scenario-env.js';

export { DEFAULT_MEASUREMENTS, DEFAULT_SCALE_STEPS, PATHS, type PathName };

const duration = z.number().positive().max(3600);
const common = {
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{0,62}$/, 'lowercase letters, digits, dots and dashes')
    .optional(),
  path: z.enum(PATHS),
  durationSeconds: duration.optional(),
  warmupSeconds: z.number().min(0).max(600).optional(),
  rounds: z.number().int().min(1).max(100).optional(),
};

const throughput = z.strictObject({
  ...common,
  kind: z.literal('throughput'),
  tool: z.enum(['auto', ...names(clientsOf('throughput'))]).default('auto'),
  protocol: z.enum(['tcp', 'udp']).default('tcp'),
  streams: z.number().int().min(1).max(128).default(1),
  /** UDP sender rate over all streams, Mbit/s (iperf3 -b); UDP has no congestion control, so a rate is required. */
  udpTargetMbps: z.number().positive().max(400_000).optional(),
});

const http = z.strictObject({
  ...common,
  kind: z.literal('http'),
  tool: z.enum(['auto', ...names(clientsOf('http'))]).default('auto'),
  server: z.enum(['auto', ...names(serversOf('http'))]).default('auto'),
  mode: z.enum(['keepalive', 'short-connection']).default('keepalive'),
  connections: z.number().int().min(1).max(10_000).default(64),
  threads: z.number().int().min(1).max(64).default(2),
  /** Requests per second in all; absent or 0 = as fast as possible. A fixed rate measures latency, not capacity. */
  qps: z.number().min(0).max(1_000_000).default(0),
  /** Path requested of the server (the built-in server answers 404 on /missing). */
  urlPath: z
    .string()
    .regex(/^\/[A-Za-z0-9._~\-/]*$/, 'an absolute path of letters, digits and ._~-/')
    .max(200)
    .default('/'),
});

const rr = z.strictObject({
  ...common,
  kind: z.literal('rr'),
  tool: z.enum(['auto', ...names(clientsOf('rr'))]).default('auto'),
  /** rr: TCP_RR (one connection, transactions back to back); crr: TCP_CRR (a new connection per transaction). */
  mode: z.enum(['rr', 'crr']).default('rr'),
  connections: z.number().int().min(1).max(1024).default(1),
  requestBytes: z.number().int().min(1).max(65_536).default(1),
  responseBytes: z.number().int().min(1).max(65_536).default(1),
});

/** Control-plane events a disruption phase fires (collector/runs/disruption-events.ts says what each does). */
export const DISRUPTION_EVENTS = [
  'services-added',
  'services-removed',
  'endpoint-removed',
  'backend-gone',
  'backend-link-down',
  'dataplane-restart',
] as const;
export type DisruptionEvent = (typeof DISRUPTION_EVENTS)[number];

/** The events that change the number of Services (`services` of them, through the frontend's scaler). */
export function changesServiceCount(event: DisruptionEvent): event is 'services-added' | 'services-removed' {
  return event === 'services-added' || event === 'services-removed';
}

/**
 * A steady open-loop probe stream through a Service with two backends while
 * the collector fires one event `eventAtSeconds` into it. Its own duration
 * (the lab's short load durations would leave no time to recover) and one
 * round: an event is not repeated on a dataplane it already changed.
 */
const disruption = z.strictObject({
  ...common,
  kind: z.literal('disruption'),
  path: z.literal('service').default('service'),
  tool: z.enum(['auto', ...names(clientsOf('disruption'))]).default('auto'),
  event: z.enum(DISRUPTION_EVENTS),
  /** services-added: Services (one endpoint each, outside the lab) created at once; services-removed: created before the stream, removed at once. */
  services: z.number().int().min(1).max(100_000).default(1000),
  /** Seconds of undisturbed stream before the event (the baseline). */
  eventAtSeconds: z.number().min(0.5).max(600).default(3),
  durationSeconds: duration.default(12),
  rounds: z.literal(1).default(1),
  warmupSeconds: z.literal(0).default(0),
  /** Attempts per second of each kind (new connections, requests on kept ones). */
  rate: z.number().int().min(1).max(2000).default(100),
  keptConnections: z.number().int().min(1).max(64).default(4),
  timeoutMs: z.number().int().min(50).max(10_000).default(1000),
});

const measurement = z.discriminatedUnion('kind', [throughput, http, rr, disruption]);

const serviceScale = z.strictObject({
  /** Dummy Services present at each step (cumulative; the first is the baseline). */
  steps: z.array(z.number().int().min(0).max(100_000)).min(1).max(50).default(DEFAULT_SCALE_STEPS),
  endpointsPerService: z.number().int().min(1).max(100).default(4),
  /** How long every node's dataplane may take to show a step's Services before the step fails. */
  syncTimeoutSeconds: z.number().positive().max(3600).default(600),
});

export const scenarioSchema = z
  .strictObject({
    name: z.string().min(1).max(200).default('default'),
    durationSeconds: duration.default(10),
    /** Rounds of throughput measurements (iperf3 takes whole seconds) when shorter or longer than durationSeconds; default: durationSeconds. */
    throughputDurationSeconds: duration.optional(),
    warmupSeconds: z.number().min(0).max(600).default(2),
    /** Measured rounds per measurement (the warm-up runs once before them); 3 gives a confidence interval. */
    rounds: z.number().int().min(1).max(100).default(3),
    /** Pause between rounds, letting TIME_WAIT sockets and queues drain. */
    roundSleepSeconds: z.number().min(0).max(600).default(1),
    /** Node names; default: the first two connected agents by name. */
    serverNode: z.string().min(1).max(253).optional(),
    clientNode: z.string().min(1).max(253).optional(),
    /** Allow server and client on the same node (default: refuse). */
    allowSameNode: z.boolean().default(false),
    /** Overrides of the methodology guards' thresholds (report/guards.ts DEFAULT_GUARD_THRESHOLDS), e.g. { "clientCpuShare": 0.8 }. */
    guardThresholds: z
      .strictObject({
        timeWaitShare: z.number().gt(0).max(1),
        conntrackShare: z.number().gt(0).max(1),
        clientCpuShare: z.number().gt(0).max(1),
        serverCpuShare: z.number().gt(0).max(1),
        errorShare: z.number().min(0).max(1),
        retransmitShare: z.number().min(0).max(1),
        linkRateShare: z.number().gt(0).max(1),
        minRounds: z.number().int().min(1).max(100),
        minSamplesP99: z.number().int().min(1),
        minSamplesP999: z.number().int().min(1),
      })
      .partial()
      .default({}),
    /** Speed of the nodes' links in Gbit/s when the agents cannot read it (virtual NICs); feeds the link-rate guard. */
    linkGbps: z.number().positive().max(1600).optional(),
    /**
     * Periodic dataplane samples for the time series; phase boundaries are always
     * sampled on top. 0 turns periodic samples off (a sweep does: at 30,000
     * Services one sample of a node costs seconds of CPU that the measurement
     * would share).
     */
    sampleIntervalMs: z.union([z.literal(0), z.number().int().min(100).max(600_000)]).default(5000),
    /** Idle window before the first phase whose CPU per second is subtracted from each round's (CPU per unit of work); 0 = none. */
    cpuBaselineSeconds: z.number().min(0).max(60).default(2),
    measurements: z.array(measurement).min(1).max(500).optional(),
    /** A Service scale sweep: the measurements (default: keep-alive and short-connection RPS and TCP_CRR via Service) run at every step. */
    serviceScale: serviceScale.optional(),
    /** Overhead conditions (NetworkPolicy, policy count, L7 policy, Hubble, encryption), each measured beside the baseline. */
    conditions: conditionsSchema.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.serverNode && s.clientNode && s.serverNode === s.clientNode && !s.allowSameNode) {
      ctx.addIssue({
        code: 'custom',
        path: ['clientNode'],
        message: 'must differ from serverNode unless allowSameNode is true',
      });
    }
    if (s.serviceScale && s.conditions)
      ctx.addIssue({
        code: 'custom',
        path: ['conditions'],
        message: 'cannot be combined with serviceScale in one run',
      });
    s.serviceScale?.steps.forEach((n, i, all) => {
      if (i > 0 && n <= (all[i - 1] as number))
        ctx.addIssue({ code: 'custom', path: ['serviceScale', 'steps', i], message: 'steps must increase' });
    });
    const seen = new Set<string>();
    s.measurements?.forEach((m, i) => {
      const at = (field: string, message: string): void =>
        ctx.addIssue({ code: 'custom', path: ['measurements', i, field], message });
      if (s.serviceScale && m.path !== 'service')
        at('path', "a Service scale sweep measures through the Service: path must be 'service'");
      if (m.id && seen.has(m.id)) at('id', `duplicate id '${m.id}'`);
      if (m.id) seen.add(m.id);
      refineMeasurement(m, at);
    });
  });

/** Combinations no tool can measure, refused before anything runs. */
function refineMeasurement(m: z.output<typeof measurement>, at: (field: string, message: string) => void): void {
  if (m.kind === 'disruption') {
    if (m.durationSeconds < m.eventAtSeconds + 1)
      at('durationSeconds', `must leave at least 1 s after the event (eventAtSeconds ${m.eventAtSeconds})`);
    return;
  }
  if (m.kind === 'throughput') {
    if (m.protocol === 'udp' && m.udpTargetMbps === undefined)
      at('udpTargetMbps', 'required for UDP (UDP has no congestion control: the sender needs a rate)');
    if (m.protocol === 'tcp' && m.udpTargetMbps !== undefined) at('udpTargetMbps', "only applies to protocol 'udp'");
    if (m.protocol === 'udp' && m.path === 'service')
      at('path', 'UDP through a Service is not supported yet (run Services are TCP): use a pod or host path');
  }
  // What the named tool cannot do, from its catalogue facts; the alternatives are those 'auto' would try.
  const c = m.tool === 'auto' ? undefined : findTool(m.tool)?.client;
  const others = (fits: (o: ClientFacts) => boolean): string =>
    orList(clientsOf(m.kind).filter((t) => t.client.autoRank !== null && fits(t.client)));
  if (m.kind === 'http') {
    if (c && m.qps > 0 && !c.fixedRate)
      at('tool', `${m.tool} cannot hold a fixed rate: use ${others((o) => o.fixedRate)} (or auto) with qps`);
    if (c && m.qps === 0 && !c.maxRate) at('qps', `${m.tool} sends at a fixed rate: set qps > 0`);
    if (m.qps > 0 && m.qps < m.connections)
      at('qps', `must be at least connections (${m.connections}) so every connection sends`);
  }
  if (m.kind !== 'rr' || !c) return;
  if (m.mode === 'crr' && !c.crr)
    at('tool', `${m.tool} keeps one connection: TCP_CRR needs ${others((o) => o.crr)} (or auto)`);
  if (c.maxConnections !== undefined && m.connections > c.maxConnections) {
    at(
      'connections',
      `${m.tool} runs ${c.maxConnections === 1 ? 'one connection' : `at most ${c.maxConnections} connections`}: use ${others((o) => o.maxConnections === undefined)} (or auto) for ${m.connections}`,
    );
  }
  if (m.path === 'service' && !c.throughService) {
    at(
      'tool',
      `${m.tool} opens a second (data) connection, and a run Service exposes one port: use ${others((o) => o.throughService)} (or auto) through a Service`,
    );
  }
}

export type ScenarioInput = z.input<typeof scenarioSchema>;
export type Measurement = z.output<typeof measurement>;

/** A validated scenario whose measurements all have ids, durations and rounds. */
export interface Scenario extends Omit<z.output<typeof scenarioSchema>, 'measurements'> {
  measurements: (Measurement & { id: string; durationSeconds: number; warmupSeconds: number; rounds: number })[];
  /** The measurements are the defaults: the plan skips (and reports) those the nodes cannot run instead of refusing the run. */
  measurementsDefaulted: boolean;
}
export type ServiceScale = z.output<typeof serviceScale>;

const PATH_LABEL: Record<PathName, string> = {
  'pod-to-pod': 'pod-to-pod',
  'pod-to-pod-same-node': 'pod-to-pod same node',
  service: 'service',
  'host-to-host': 'host-to-host',
  'pod-to-host': 'pod-to-host',
};

export function measurementLabel(m: Measurement): string {
  const path = PATH_LABEL[m.path];
  const tool = m.tool === 'auto' ? '' : ` (${m.tool})`;
  if (m.kind === 'throughput') {
    return m.protocol === 'udp'
      ? `UDP ${path} ${m.udpTargetMbps} Mbit/s target${tool}`
      : `TCP ${path} ${m.streams} stream${m.streams === 1 ? '' : 's'}${tool}`;
  }
  if (m.kind === 'rr')
    return `${m.mode === 'rr' ? 'TCP_RR' : 'TCP_CRR'} ${path}${m.connections > 1 ? ` c${m.connections}` : ''}${tool}`;
  if (m.kind === 'disruption')
    return `disruption: ${changesServiceCount(m.event) ? `${m.services.toLocaleString('en-US')} Services ${m.event.slice('services-'.length)}` : m.event} (${m.rate}/s probes via ${path})`;
  if (m.qps > 0) return `HTTP latency at ${m.qps} QPS c${m.connections} ${path}${tool}`;
  return `HTTP ${m.mode} c${m.connections} ${path}${tool}`;
}

function defaultId(m: Measurement): string {
  if (m.kind === 'throughput')
    return m.protocol === 'udp' ? `udp-${m.path}-${m.udpTargetMbps}m` : `tput-${m.path}-p${m.streams}`;
  if (m.kind === 'rr') return `${m.mode}-${m.path}${m.connections > 1 ? `-c${m.connections}` : ''}`;
  if (m.kind === 'disruption') return `disruption-${m.event}`;
  if (m.qps > 0)
    return `http-qps${m.qps}-${m.path}-c${m.connections}${m.tool === 'http-open-loop' ? '-open-loop' : ''}`;
  return `http-${m.mode === 'keepalive' ? 'ka' : 'sc'}-${m.path}-c${m.connections}`;
}

/**
 * Validates a scenario (object or JSON text); throws E_VALIDATION naming each
 * bad field. `env` carries the study's knobs (IPERF_DURATION, FORTIO_DURATION,
 * ROUNDS, ROUND_SLEEP), which override the scenario.
 */
export function parseScenario(input: unknown, env: Readonly<Record<string, string | undefined>> = {}): Scenario {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (err) {
      throw validationError([{ path: '', message: `not valid JSON: ${(err as Error).message}` }], 'scenario');
    }
  }
  const o = envOverrides(env);
  const s = parseWith(scenarioSchema, value ?? {}, 'scenario');
  const used = new Map<string, number>();
  const given =
    s.measurements ??
    (s.serviceScale ? DEFAULT_SCALE_MEASUREMENTS : DEFAULT_MEASUREMENTS).map((m) => measurement.parse(m));
  const measurements = given.map((m) => {
    let id = m.id ?? defaultId(m);
    const n = used.get(id) ?? 0;
    used.set(id, n + 1);
    if (!m.id && n > 0) id = `${id}-${n + 1}`;
    // A disruption phase keeps its own duration and its one round: the lab's and the study's knobs are for load.
    if (m.kind === 'disruption') return { ...m, id };
    const envDuration = m.kind === 'throughput' ? o.throughputDurationSeconds : o.loadDurationSeconds;
    const scenarioDuration =
      m.kind === 'throughput' ? (s.throughputDurationSeconds ?? s.durationSeconds) : s.durationSeconds;
    return {
      ...m,
      id,
      durationSeconds: envDuration ?? m.durationSeconds ?? scenarioDuration,
      warmupSeconds: m.warmupSeconds ?? s.warmupSeconds,
      rounds: o.rounds ?? m.rounds ?? s.rounds,
    };
  });
  return Object.freeze({
    ...s,
    rounds: o.rounds ?? s.rounds,
    roundSleepSeconds: o.roundSleepSeconds ?? s.roundSleepSeconds,
    measurements,
    measurementsDefaulted: !s.measurements,
  });
}
