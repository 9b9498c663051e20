/**
 * The REST routes as data: method, path template, the zod schemas of the
 * query and body the handler validates with, and the answers. server.ts routes
 * with this table and openapi.ts documents it, so neither can drift.
 */
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import type { MonitorSnapshot } from '../../gen/cnibench/v1/monitor.js';
import { parseCompareQuery } from '../../report/compare.js';
import type { CollectorMetrics } from '../metrics.js';
import type { RunsApi } from '../runs/runs-api.js';
import { scenarioSchema } from '../runs/scenario.js';
import { decodePageToken, encodePageToken, pageByKey } from './page-token.js';
import { readJson } from './read-body.js';
import * as S from './schemas.js';

export type Method = 'GET' | 'POST' | 'DELETE';

export interface Reply {
  status: number;
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface RouteContext {
  req: IncomingMessage;
  /** Path parameters by name ({id}). */
  params: Record<string, string>;
  /** The query, validated by the route's query schema (defaults applied). */
  query: Record<string, unknown>;
  url: URL;
}

/** One documented answer: content types with a schema each (undefined: text without a schema). */
export interface Answer {
  description: string;
  content: Record<string, z.ZodType | undefined>;
  headers?: Record<string, string>;
}

export interface Route {
  method: Method;
  /** OpenAPI path template, `{name}` a path parameter of letters, digits, '_' and '-'. */
  path: string;
  operationId: string;
  summary: string;
  /** Served without the operator's token (probes, scrapes, the contract itself). */
  open?: boolean;
  query?: z.ZodObject;
  /** The request body's schema (the handler validates with this very schema). */
  body?: z.ZodType;
  answers: Record<number, Answer>;
  handle(ctx: RouteContext): Promise<Reply> | Reply;
}

const JSON_CT = 'application/json';
const json = (schema: z.ZodType, description: string): Answer => ({ description, content: { [JSON_CT]: schema } });

export interface RouteDeps {
  api: RunsApi;
  metrics: CollectorMetrics;
  ready: () => boolean;
  monitor?: () => MonitorSnapshot;
  /** The OpenAPI document (built from this table, so given late). */
  openapi: () => unknown;
}

export function restRoutes(d: RouteDeps): Route[] {
  const { api } = d;
  return [
    {
      method: 'GET',
      path: '/healthz',
      operationId: 'getHealth',
      summary: 'Readiness: 200 once the collector serves, 503 while it starts',
      open: true,
      answers: { 200: json(S.healthSchema, 'serving'), 503: json(S.healthSchema, 'starting') },
      handle: () => ({ status: d.ready() ? 200 : 503, body: { status: d.ready() ? 'ok' : 'starting' } }),
    },
    {
      method: 'GET',
      path: '/metrics',
      operationId: 'getMetrics',
      summary: 'Prometheus exposition of the collector',
      open: true,
      answers: { 200: { description: 'text exposition format', content: { 'text/plain': undefined } } },
      handle: async () => ({
        status: 200,
        body: await d.metrics.registry.metrics(),
        contentType: d.metrics.registry.contentType,
      }),
    },
    {
      method: 'GET',
      path: '/v1/openapi.json',
      operationId: 'getOpenApi',
      summary: 'This OpenAPI 3.1 document',
      open: true,
      answers: { 200: { description: 'OpenAPI 3.1', content: { [JSON_CT]: undefined } } },
      handle: () => ({ status: 200, body: d.openapi() }),
    },
    {
      method: 'GET',
      path: '/v1/monitor',
      operationId: 'getMonitor',
      summary: "Monitoring mode's latest snapshot: per node and per probed pair",
      answers: { 200: json(S.monitorSchema, 'the snapshot') },
      handle: () => ({ status: 200, body: d.monitor ? d.monitor() : { nodes: [], matrix: [] } }),
    },
    {
      method: 'GET',
      path: '/v1/agents',
      operationId: 'listAgents',
      summary: 'Registered agents by id, a page at a time',
      query: S.listQuery,
      answers: { 200: json(S.agentListSchema, 'a page of agents') },
      handle: ({ query }) => {
        const all = [...api.agents()].sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
        const p = pageByKey(all, (a) => a.agentId, query.limit as number, query.pageToken as string | undefined);
        return { status: 200, body: { agents: p.items, nextPageToken: p.nextPageToken } };
      },
    },
    {
      method: 'GET',
      path: '/v1/cluster',
      operationId: 'getCluster',
      summary: 'The cluster as the collector detects it now',
      answers: { 200: json(S.clusterSchema, 'the description') },
      handle: async () => ({ status: 200, body: await api.cluster() }),
    },
    {
      method: 'POST',
      path: '/v1/runs',
      operationId: 'createRun',
      summary: 'Validates a scenario, plans it against the connected agents and starts the run',
      body: scenarioSchema,
      answers: {
        201: { ...json(S.runSchema, 'started'), headers: { Location: 'the new run: /v1/runs/{id}' } },
        409: json(S.problemSchema, 'another run is in progress'),
        422: json(S.problemSchema, 'the connected agents cannot run it'),
      },
      handle: async ({ req }) => {
        const run = api.create(await readJson(req));
        return { status: 201, body: run, headers: { location: `/v1/runs/${encodeURIComponent(run.id)}` } };
      },
    },
    {
      method: 'GET',
      path: '/v1/runs',
      operationId: 'listRuns',
      summary: 'Runs, newest first, a page at a time',
      query: S.listQuery,
      answers: { 200: json(S.runListSchema, 'a page of runs') },
      handle: ({ query }) => {
        const token = query.pageToken as string | undefined;
        const after = token === undefined ? undefined : decodePageToken(token, ['number', 'string']);
        const p = api.page(
          query.limit as number,
          after ? { createdMs: after[0] as number, id: after[1] as string } : undefined,
        );
        const nextPageToken = p.next ? encodePageToken([p.next.createdMs, p.next.id]) : '';
        return { status: 200, body: { runs: p.runs, nextPageToken } };
      },
    },
    {
      method: 'GET',
      path: '/v1/runs/{id}',
      operationId: 'getRun',
      summary: 'One run with its phases',
      answers: { 200: json(S.runSchema, 'the run'), 404: json(S.problemSchema, 'no such run') },
      handle: ({ params }) => ({ status: 200, body: api.get(params.id ?? '') }),
    },
    {
      method: 'DELETE',
      path: '/v1/runs/{id}',
      operationId: 'cancelRun',
      // 202: the cancel is under way (the agents clean up in the background); poll GET for the end state.
      summary: 'Cancels a run; the agents clean up in the background (poll GET for the end state)',
      answers: {
        202: json(S.runSchema, 'cancel under way'),
        404: json(S.problemSchema, 'no such run'),
        409: json(S.problemSchema, 'the run already ended'),
      },
      handle: ({ params }) => ({ status: 202, body: api.cancel(params.id ?? '') }),
    },
    {
      method: 'GET',
      path: '/v1/runs/{id}/report',
      operationId: 'getReport',
      summary: "A run's report",
      query: S.reportQuery,
      answers: {
        200: {
          description: 'the report',
          content: { [JSON_CT]: undefined, 'text/markdown': undefined, 'text/html': undefined, 'text/csv': undefined },
        },
        404: json(S.problemSchema, 'no such run'),
      },
      handle: ({ params, query }) => {
        const r = api.report(params.id ?? '', query.format as string);
        return { status: 200, body: r.body, contentType: r.contentType };
      },
    },
    {
      method: 'GET',
      path: '/v1/compare',
      operationId: 'compareRuns',
      summary: 'Runs side by side with a verdict per measurement (the first run is the baseline)',
      query: S.compareQuery,
      answers: {
        200: {
          description: 'the comparison',
          content: { 'text/markdown': undefined, [JSON_CT]: undefined, 'text/csv': undefined, 'text/html': undefined },
        },
        404: json(S.problemSchema, 'a run not found'),
      },
      handle: ({ url }) => {
        const r = api.compare(parseCompareQuery(url.searchParams));
        return { status: 200, body: r.body, contentType: r.contentType };
      },
    },
  ];
}
