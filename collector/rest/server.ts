/**
 * The REST API over RunsApi, plus /healthz and /metrics. Routing is a small
 * table; errors go through toWireStatus so REST and gRPC answer alike. An
 * optional auth check (rest/auth.ts) runs before routing.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { CniBenchError, ErrorCodes, toWireStatus } from '../../core/errors.js';
import type { MonitorSnapshot } from '../../gen/cnibench/v1/monitor.js';
import { parseCompareQuery } from '../../report/compare.js';
import type { CollectorMetrics } from '../metrics.js';
import type { RunsApi } from '../runs/runs-api.js';
import type { RestAuth } from './auth.js';

const MAX_BODY = 1024 * 1024;

type Handler = (
  req: IncomingMessage,
  params: string[],
  url: URL,
) => Promise<{ status: number; body: unknown; contentType?: string }>;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY)
      throw new CniBenchError(ErrorCodes.VALIDATION, `body: larger than ${MAX_BODY} bytes`, {
        details: { field: 'body' },
      });
    chunks.push(c as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CniBenchError(ErrorCodes.VALIDATION, `body: not valid JSON (${(err as Error).message})`, {
      details: { field: 'body' },
    });
  }
}

/** PEM certificate and key: set, REST is served over TLS. */
export interface RestTls {
  cert: Buffer;
  key: Buffer;
}

export function createRestServer(
  api: RunsApi,
  metrics: CollectorMetrics,
  ready: () => boolean,
  auth?: RestAuth,
  monitor?: () => MonitorSnapshot,
  tls?: RestTls,
): Server {
  const routes: [string, RegExp, Handler][] = [
    ['GET', /^\/v1\/monitor$/, async () => ({ status: 200, body: monitor ? monitor() : { nodes: [], matrix: [] } })],
    [
      'GET',
      /^\/healthz$/,
      async () => ({ status: ready() ? 200 : 503, body: { status: ready() ? 'ok' : 'starting' } }),
    ],
    [
      'GET',
      /^\/metrics$/,
      async () => ({ status: 200, body: await metrics.registry.metrics(), contentType: metrics.registry.contentType }),
    ],
    ['GET', /^\/v1\/agents$/, async () => ({ status: 200, body: { agents: api.agents() } })],
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
    [
      'GET',
      /^\/v1\/runs$/,
      async (_r, _p, url) => ({ status: 200, body: { runs: api.list(parseLimit(url.searchParams.get('limit'))) } }),
    ],
    ['GET', /^\/v1\/runs\/([\w-]+)$/, async (_r, [id]) => ({ status: 200, body: api.get(id ?? '') })],
    // 202: the cancel is under way (the agents clean up in the background); poll GET for the end state.
    ['DELETE', /^\/v1\/runs\/([\w-]+)$/, async (_r, [id]) => ({ status: 202, body: api.cancel(id ?? '') })],
    [
      'GET',
      /^\/v1\/runs\/([\w-]+)\/report$/,
      async (_r, [id], url) => {
        const r = api.report(id ?? '', url.searchParams.get('format') ?? 'json');
        return { status: 200, body: r.body, contentType: r.contentType };
      },
    ],
  ];
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const send = (status: number, body: unknown, contentType = 'application/json'): void => {
      if (res.headersSent) return;
      const text = typeof body === 'string' ? body : `${JSON.stringify(body)}\n`;
      // Answered before the body was read (too large, not allowed): the rest of it is not read, so the connection cannot be reused.
      const headers = req.complete
        ? { 'content-type': contentType }
        : { 'content-type': contentType, connection: 'close' };
      res.writeHead(status, headers).end(text);
    };
    const fail = (err: unknown): void => {
      const w = toWireStatus(err);
      send(w.http, { code: w.code, message: w.message, ...w.details });
    };
    req.on('error', () => res.destroy());
    // Anything thrown before or during routing is answered, never allowed to take the process down.
    try {
      const url = parseUrl(req.url);
      if (auth && !auth(req, res, url.pathname)) return;
      const matching = routes.filter(([, re]) => re.test(url.pathname));
      const route = matching.find(([m]) => m === req.method);
      if (!route) {
        if (matching.length) send(405, { code: 'E_METHOD', message: `${req.method} not allowed on ${url.pathname}` });
        else send(404, { code: ErrorCodes.NOT_FOUND, message: `no route ${url.pathname}` });
        return;
      }
      const params = (url.pathname.match(route[1]) ?? []).slice(1);
      route[2](req, params, url).then((r) => send(r.status, r.body, r.contentType), fail);
    } catch (err) {
      fail(err);
    }
  };
  const server: Server = tls
    ? createTlsServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2' }, handler)
    : createServer(handler);
  // A client that trickles headers or a body cannot hold a socket for ever.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 100;
  return server;
}

/** The request target as a URL; a target that is not a path (`//`, `http://x`, garbage) is a 400 naming it. */
export function parseUrl(target: string | undefined): URL {
  const t = target ?? '/';
  if (!t.startsWith('/') || t.startsWith('//')) {
    throw new CniBenchError(ErrorCodes.VALIDATION, `url: must be a path starting with a single '/'`, {
      details: { field: 'url' },
    });
  }
  try {
    return new URL(t, 'http://collector');
  } catch {
    throw new CniBenchError(ErrorCodes.VALIDATION, 'url: not a valid request target', { details: { field: 'url' } });
  }
}

/** `?limit=`: an integer 1..1000, 50 when absent. */
export function parseLimit(raw: string | null): number {
  if (raw === null) return 50;
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > 1000) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `limit: must be an integer from 1 to 1000, got '${raw.slice(0, 32)}'`,
      { details: { field: 'limit' } },
    );
  }
  return Number(raw);
}
