/**
 * The REST API's zod schemas beside the scenario schema: the query strings the
 * server validates with, and the shapes it answers with. The OpenAPI document
 * (openapi.ts) is generated from these and from scenarioSchema, so the
 * contract cannot drift from the validation.
 */
import { z } from 'zod';
import { COMPARISON_FORMATS, MAX_COMPARE_RUNS } from '../../report/compare.js';
import type { RunState } from '../../report/records.js';
import { REPORT_FORMATS } from '../../report/report-formats.js';

/** Formats of GET /v1/runs/{id}/report (RunsApi.report, report/report-formats.ts). */
export { REPORT_FORMATS };

const LIMIT = 'must be an integer from 1 to 1000';

export const listQuery = z.strictObject({
  limit: z.int({ error: LIMIT }).min(1, { error: LIMIT }).max(1000, { error: LIMIT }).default(50).describe('page size'),
  pageToken: z.string().max(512).optional().describe("the previous page's nextPageToken; absent: the first page"),
});

export const reportQuery = z.strictObject({
  format: z
    .enum(REPORT_FORMATS)
    .default('json')
    .describe(
      'json: the report model; md: Markdown; html: one self-contained page with SVG charts; csv: one line per metric',
    ),
});

export const compareQuery = z.strictObject({
  runs: z.string().min(1).describe(`comma-separated run ids, 2 to ${MAX_COMPARE_RUNS}; the first is the baseline`),
  format: z.enum(COMPARISON_FORMATS).default('md'),
  labels: z.string().optional().describe('comma-separated column labels, one per run'),
  noiseFloor: z
    .number({ error: 'must be a number in [0, 1)' })
    .min(0)
    .lt(1)
    .optional()
    .describe('relative differences below this are within noise (default 0.03)'),
});

// A Record over RunState: a state added to the store and not named here fails the build.
const RUN_STATES: Record<RunState, true> = {
  pending: true,
  running: true,
  succeeded: true,
  failed: true,
  cancelled: true,
  interrupted: true,
};
const runState = z.enum(Object.keys(RUN_STATES) as [RunState, ...RunState[]]);

export const runSchema = z.looseObject({
  id: z.string(),
  state: runState,
  reason: z.string(),
  createdMs: z.int(),
  startedMs: z.int(),
  endedMs: z.int(),
  scenario: z.looseObject({}).describe('the validated scenario, defaults expanded'),
  cluster: z.looseObject({}).describe('what the run measured on: CNI, kube-proxy mode, kernel, nodes'),
  phases: z.array(
    z.looseObject({
      index: z.int(),
      name: z.string(),
      state: z.string(),
      error: z.string(),
      startedMs: z.int(),
      endedMs: z.int(),
    }),
  ),
});

export const runListSchema = z.strictObject({
  runs: z.array(runSchema),
  nextPageToken: z.string().describe('empty on the last page'),
});

export const agentSchema = z.looseObject({
  agentId: z.string(),
  nodeName: z.string(),
  podIp: z.string(),
  hostIp: z.string(),
  kernel: z.string(),
  agentVersion: z.string(),
  connected: z.boolean(),
  lastSeenMs: z.int(),
  tools: z.array(z.string()).describe('name@version of each tool the agent found'),
  iptablesBackend: z.string(),
  kubeServices: z.boolean(),
  outboxDropped: z.int(),
  nodeFacts: z
    .looseObject({
      cpuModel: z.string(),
      physicalCores: z.int(),
      threads: z.int(),
      governor: z.string(),
      virtualization: z.string(),
      os: z.string(),
      memoryBytes: z.int(),
      podInterface: z.string(),
      nicDriver: z.string(),
      nicSpeedMbps: z.int(),
      mtu: z.int(),
      notes: z.array(z.string()),
    })
    .optional()
    .describe("the host's fingerprint from registration (systeminformation)"),
});

export const agentListSchema = z.strictObject({
  agents: z.array(agentSchema),
  nextPageToken: z.string().describe('empty on the last page'),
});

export const clusterSchema = z.strictObject({
  serviceFrontend: z.string(),
  description: z.looseObject({}),
});

export const healthSchema = z.strictObject({ status: z.enum(['ok', 'starting']) });

export const monitorSchema = z.looseObject({
  nodes: z.array(z.looseObject({})),
  matrix: z.array(z.looseObject({})),
});

export const problemSchema = z.looseObject({
  type: z.string().describe('urn:cni-bench:problem:<code>'),
  title: z.string(),
  status: z.int(),
  detail: z.string(),
  instance: z.string().optional(),
  code: z.string().describe('stable error code, e.g. E_VALIDATION'),
  message: z.string(),
  field: z.string().optional().describe('path of the first bad field, like measurements[2].tool'),
  errors: z.array(z.strictObject({ path: z.string(), message: z.string() })).optional(),
});
