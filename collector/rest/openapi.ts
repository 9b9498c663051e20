/**
 * The OpenAPI 3.1 document of the REST API, generated from the route table and
 * its zod schemas (zod's toJSONSchema, JSON Schema 2020-12, which is OpenAPI
 * 3.1's dialect). Request shapes are the schemas' input side (defaults are
 * optional), answers their output side.
 */
import { z } from 'zod';
import { VERSION } from '../../core/version.js';
import { PROBLEM_CONTENT_TYPE } from './problem.js';
import type { Answer, Route } from './routes.js';
import { problemSchema } from './schemas.js';

type Json = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as Json;
  return rest;
}

/** `/v1/runs/{id}` -> `^/v1/runs/([\w-]+)$` and the names of its parameters. */
export function pathPattern(template: string): { re: RegExp; names: string[] } {
  const names: string[] = [];
  const body = template
    .split(/(\{\w+\})/)
    .map((part) => {
      const m = /^\{(\w+)\}$/.exec(part);
      if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(m[1] as string);
      return '([\\w-]+)';
    })
    .join('');
  return { re: new RegExp(`^${body}$`), names };
}

const PROBLEM = { $ref: '#/components/schemas/Problem' };
const problemAnswer = (description: string): Json => ({
  description,
  content: { [PROBLEM_CONTENT_TYPE]: { schema: PROBLEM } },
});

function answer(a: Answer): Json {
  const content: Json = {};
  for (const [type, schema] of Object.entries(a.content)) {
    const ct = type === 'application/json' && schema === problemSchema ? PROBLEM_CONTENT_TYPE : type;
    content[ct] = schema === problemSchema ? { schema: PROBLEM } : schema ? { schema: schemaOf(schema, 'output') } : {};
  }
  const headers = a.headers
    ? Object.fromEntries(Object.entries(a.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }]))
    : undefined;
  return { description: a.description, content, ...(headers ? { headers } : {}) };
}

function operation(r: Route): Json {
  const parameters: Json[] = pathPattern(r.path).names.map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string', pattern: '^[\\w-]+$', maxLength: 128 },
  }));
  if (r.query) {
    const js = schemaOf(r.query, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(js.properties ?? {})) {
      const { description, ...rest } = schema;
      parameters.push({
        name,
        in: 'query',
        required: js.required?.includes(name) ?? false,
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  }
  const responses: Json = {};
  for (const [status, a] of Object.entries(r.answers)) responses[status] = answer(a);
  if (r.query || r.body || parameters.length) responses['400'] ??= problemAnswer('bad input: `field` names it');
  if (!r.open) {
    responses['401'] ??= problemAnswer('missing or refused bearer token');
    responses['403'] ??= problemAnswer('not an operator');
  }
  responses.default = problemAnswer('any other error, as problem details');
  return {
    operationId: r.operationId,
    summary: r.summary,
    ...(parameters.length ? { parameters } : {}),
    ...(r.body
      ? { requestBody: { required: false, content: { 'application/json': { schema: schemaOf(r.body, 'input') } } } }
      : {}),
    responses,
    security: r.open ? [] : [{ bearer: [] }],
  };
}

export function buildOpenApi(routes: readonly Route[]): Json {
  const paths: Record<string, Json> = {};
  for (const r of routes) {
    paths[r.path] = { ...paths[r.path], [r.method.toLowerCase()]: operation(r) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'cni-bench collector',
      version: VERSION,
      description:
        'Runs, reports, comparisons and monitoring of the cni-bench collector. Errors are RFC 9457 problem details; list endpoints page with pageToken/nextPageToken.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths,
    components: {
      schemas: { Problem: schemaOf(problemSchema, 'output') },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: "the operator's token (the chart's Secret); unset on the collector, the API is open",
        },
      },
    },
  };
}
