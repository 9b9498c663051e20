/**
 * The scenario schema: what a run measures, with the defaults of the reference
 * study (shortened for the lab by the caller). One schema serves REST, gRPC and
 * the CLI; every refusal names the field.
 */
import { z } from 'zod';
import { validationError } from '../../core/errors.js';
import { parseWith } from '../../core/validate.js';

export const PATHS = ['pod-to-pod', 'service'] as const;
export type PathName = (typeof PATHS)[number];

const duration = z.number().positive().max(3600);
const common = {
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lowercase letters, digits and dashes').optional(),
  path: z.enum(PATHS),
  durationSeconds: duration.optional(),
  warmupSeconds: z.number().min(0).max(600).optional(),
};

const throughput = z.strictObject({
  ...common,
  kind: z.literal('throughput'),
  tool: z.enum(['iperf3']).default('iperf3'),
  streams: z.number().int().min(1).max(128).default(1),
});

const http = z.strictObject({
  ...common,
  kind: z.literal('http'),
  tool: z.enum(['wrk']).default('wrk'),
  server: z.enum(['http-echo']).default('http-echo'),
  mode: z.enum(['keepalive', 'short-connection']).default('keepalive'),
  connections: z.number().int().min(1).max(10_000).default(64),
  threads: z.number().int().min(1).max(64).default(2),
});

const measurement = z.discriminatedUnion('kind', [throughput, http]);

export const DEFAULT_MEASUREMENTS: z.input<typeof measurement>[] = [
  { kind: 'throughput', path: 'pod-to-pod', streams: 1 },
  { kind: 'throughput', path: 'pod-to-pod', streams: 8 },
  { kind: 'throughput', path: 'service', streams: 8 },
  { kind: 'http', path: 'pod-to-pod', mode: 'keepalive', connections: 64 },
  { kind: 'http', path: 'service', mode: 'keepalive', connections: 64 },
  { kind: 'http', path: 'service', mode: 'short-connection', connections: 64 },
];

/** Defaults of a sweep: the study's steps; its short-connection and keep-alive RPS through one fronting Service. */
export const DEFAULT_SCALE_STEPS = [0, 5000, 10_000, 20_000, 30_000];
export const DEFAULT_SCALE_MEASUREMENTS: z.input<typeof measurement>[] = [
  { kind: 'http', path: 'service', mode: 'keepalive', connections: 64 },
  { kind: 'http', path: 'service', mode: 'short-connection', connections: 64 },
];

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
    warmupSeconds: z.number().min(0).max(600).default(2),
    /** Node names; default: the first two connected agents by name. */
    serverNode: z.string().min(1).optional(),
    clientNode: z.string().min(1).optional(),
    /** Allow server and client on the same node (default: refuse). */
    allowSameNode: z.boolean().default(false),
    /**
     * Periodic dataplane samples for the time series; phase boundaries are always
     * sampled on top. 0 turns periodic samples off (a sweep does: at 30,000
     * Services one sample of a node costs seconds of CPU that the measurement
     * would share).
     */
    sampleIntervalMs: z.union([z.literal(0), z.number().int().min(100).max(600_000)]).default(5000),
    measurements: z.array(measurement).min(1).max(500).optional(),
    /** A Service scale sweep: the measurements (default: keep-alive and short-connection RPS via Service) run at every step. */
    serviceScale: serviceScale.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.serverNode && s.clientNode && s.serverNode === s.clientNode && !s.allowSameNode) {
      ctx.addIssue({ code: 'custom', path: ['clientNode'], message: 'must differ from serverNode unless allowSameNode is true' });
    }
    s.serviceScale?.steps.forEach((n, i, all) => {
      if (i > 0 && n <= (all[i - 1] as number)) ctx.addIssue({ code: 'custom', path: ['serviceScale', 'steps', i], message: 'steps must increase' });
    });
    s.measurements?.forEach((m, i) => {
      if (s.serviceScale && m.path !== 'service') ctx.addIssue({ code: 'custom', path: ['measurements', i, 'path'], message: "a Service scale sweep measures through the Service: path must be 'service'" });
    });
    const seen = new Set<string>();
    s.measurements?.forEach((m, i) => {
      if (m.id && seen.has(m.id)) ctx.addIssue({ code: 'custom', path: ['measurements', i, 'id'], message: `duplicate id '${m.id}'` });
      if (m.id) seen.add(m.id);
    });
  });

export type ScenarioInput = z.input<typeof scenarioSchema>;
export type Measurement = z.output<typeof measurement>;

/** A validated scenario whose measurements all have ids and durations. */
export interface Scenario extends Omit<z.output<typeof scenarioSchema>, 'measurements'> {
  measurements: (Measurement & { id: string; durationSeconds: number; warmupSeconds: number })[];
}
export type ServiceScale = z.output<typeof serviceScale>;

export function measurementLabel(m: Measurement): string {
  if (m.kind === 'throughput') return `${m.tool} ${m.path} TCP ${m.streams} stream${m.streams === 1 ? '' : 's'}`;
  return `HTTP ${m.mode} c${m.connections} ${m.path} (${m.tool})`;
}

function defaultId(m: Measurement): string {
  return m.kind === 'throughput' ? `tput-${m.path}-p${m.streams}` : `http-${m.mode === 'keepalive' ? 'ka' : 'sc'}-${m.path}-c${m.connections}`;
}

/** Validates a scenario (object or JSON text); throws E_VALIDATION naming each bad field. */
export function parseScenario(input: unknown): Scenario {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (err) {
      throw validationError([{ path: '', message: `not valid JSON: ${(err as Error).message}` }], 'scenario');
    }
  }
  const s = parseWith(scenarioSchema, value ?? {}, 'scenario');
  const used = new Map<string, number>();
  const given = s.measurements ?? (s.serviceScale ? DEFAULT_SCALE_MEASUREMENTS : DEFAULT_MEASUREMENTS).map((m) => measurement.parse(m));
  const measurements = given.map((m) => {
    let id = m.id ?? defaultId(m);
    const n = used.get(id) ?? 0;
    used.set(id, n + 1);
    if (!m.id && n > 0) id = `${id}-${n + 1}`;
    return { ...m, id, durationSeconds: m.durationSeconds ?? s.durationSeconds, warmupSeconds: m.warmupSeconds ?? s.warmupSeconds };
  });
  return Object.freeze({ ...s, measurements });
}
