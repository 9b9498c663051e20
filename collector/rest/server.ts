/**
 * The REST API over RunsApi, plus /healthz and /metrics. Routing is a small
 * table; errors go through toWireStatus so REST and gRPC answer alike. An
 * optional auth check (rest/auth.ts) runs before routing.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { CniBenchError, ErrorCodes, toWireStatus } from '../../core/errors.js';
import type { CollectorMetrics } from '../metrics.js';
import { parseCompareQuery } from '../../report/compare.js';
import type { RunsApi } from '../runs/runs-api.js';
import type { MonitorSnapshot } from '../../gen/cnibench/v1/monitor.js';
import type { RestAuth } from './auth.js';

const MAX_BODY = 1024 * 1024;

type Handler = (req: IncomingMessage, params: string[], url: URL) => Promise<{ status: number; body: unknown; contentType?: string }>;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new CniBenchError(ErrorCodes.VALIDATION, `body: larger than ${MAX_BODY} bytes`, { details: { field: 'body' } });
    chunks.push(c as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CniBenchError(ErrorCodes.VALIDATION, `body: not valid JSON (${(err as Error).message})`, { details: { field: 'body' } });
  }
}

export function createRestServer(api: RunsApi, metrics: CollectorMetrics, ready: () => boolean, auth?: RestAuth, monitor?: () => MonitorSnapshot): Server {
  const routes: [string, RegExp, Handler][] = [
    ['GET', /^\/v1\/monitor$/, async () => ({ status: 200, body: monitor ? monitor() : { nodes: [], matrix: [] } })],
    ['GET', /^\/healthz$/, async () => ({ status: ready() ? 200 : 503, body: { status: ready() ? 'ok' : 'starting' } })],
    ['GET', /^\/metrics$/, async () => ({ status: 200, body: await metrics.registry.metrics(), contentType: metrics.registry.contentType })],
    ['GET', /^\/v1\/agents$/, async () => ({ status: 200, body: { agents: api.agents() } })],
    ['GET', /^\/v1\/cluster$/, async () => ({ status: 200, body: await api.cluster() })],
    ['GET', /^\/v1\/cluster$/, async () => ({ status: 200, body: await api.cluster() })],
    ['POST', /^\/v1\/runs$/, async (req) => ({ status: 201, body: api.create(await readJson(req)) })],
    [
      'GET',
      /^\/v1\/compare$/,
      async (_r, _p, url) => {
        const r = api.compare(parseCompareQuery(url.searchParams));
        return { status: 200, body: r.body, contentType: r.contentType };
      },
    ],
    ['GET', /^\/v1\/runs$/, async (_r, _p, url) => ({ status: 200, body: { runs: api.list(Number(url.searchParams.get('limit') ?? 50)) } })],
    ['GET', /^\/v1\/runs\/([\w-]+)$/, async (_r, [id]) => ({ status: 200, body: api.get(id ?? '') })],
    ['DELETE', /^\/v1\/runs\/([\w-]+)$/, async (_r, [id]) => ({ status: 200, body: await api.cancel(id ?? '') })],
    [
      'GET',
      /^\/v1\/runs\/([\w-]+)\/report$/,
      async (_r, [id], url) => {
        const r = api.report(id ?? '', url.searchParams.get('format') ?? 'json');
        return { status: 200, body: r.body, contentType: r.contentType };
      },
    ],
  ];
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://collector');
    if (auth && !auth(req, res, url.pathname)) return;
    const send = (status: number, body: unknown, contentType = 'application/json'): void => {
      const text = typeof body === 'string' ? body : `${JSON.stringify(body)}\n`;
      res.writeHead(status, { 'content-type': contentType }).end(text);
    };
    const matching = routes.filter(([, re]) => re.test(url.pathname));
    const route = matching.find(([m]) => m === req.method);
    if (!route) {
      if (matching.length) send(405, { code: 'E_METHOD', message: `${req.method} not allowed on ${url.pathname}` });
      else send(404, { code: ErrorCodes.NOT_FOUND, message: `no route ${url.pathname}` });
      return;
    }
    const params = (url.pathname.match(route[1]) ?? []).slice(1);
    route[2](req, params, url).then(
      (r) => send(r.status, r.body, r.contentType),
      (err: unknown) => {
        const w = toWireStatus(err);
        send(w.http, { code: w.code, message: w.message, ...w.details });
      },
    );
  });
}
