/**
 * The REST API over RunsApi, plus /healthz and /metrics. Routing is a small
 * table; errors go through toWireStatus so REST and gRPC answer alike. An
 * optional auth check (rest/auth.ts) runs before routing.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { MonitorSnapshot } from '../../gen/cnibench/v1/monitor.js';
import type { CollectorMetrics } from '../metrics.js';
import type { RunsApi } from '../runs/runs-api.js';
import type { RestAuth } from './auth.js';
import { buildOpenApi, pathPattern } from './openapi.js';
import { PROBLEM_CONTENT_TYPE, problem, toProblem } from './problem.js';
import { parseQuery } from './query.js';
import { type Route, restRoutes } from './routes.js';

/** PEM certificate and key: set, REST is served over TLS. */
export interface RestTls {
  cert: Buffer;
  key: Buffer;
}

interface Bound extends Route {
  re: RegExp;
  names: string[];
}

export function createRestServer(
  api: RunsApi,
  metrics: CollectorMetrics,
  ready: () => boolean,
  auth?: RestAuth,
  monitor?: () => MonitorSnapshot,
  tls?: RestTls,
): Server {
  let doc: unknown;
  const table = restRoutes({
    api,
    metrics,
    ready,
    ...(monitor ? { monitor } : {}),
    openapi: () => (doc ??= buildOpenApi(table)),
  });
  const routes: Bound[] = table.map((r) => ({ ...r, ...pathPattern(r.path) }));
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const send = (status: number, body: unknown, contentType = 'application/json', extra = {}): void => {
      if (res.headersSent) return;
      const text = typeof body === 'string' ? body : `${JSON.stringify(body)}\n`;
      // Answered before the body was read (too large, not allowed): the rest of it is not read, so the connection cannot be reused.
      const headers = { 'content-type': contentType, ...extra, ...(req.complete ? {} : { connection: 'close' }) };
      res.writeHead(status, headers).end(text);
    };
    const instance = (): string => (req.url ?? '/').split('?')[0]?.slice(0, 256) ?? '/';
    const fail = (err: unknown): void => {
      const p = toProblem(err, instance());
      send(p.status, p, PROBLEM_CONTENT_TYPE);
    };
    req.on('error', () => res.destroy());
    // Anything thrown before or during routing is answered, never allowed to take the process down.
    try {
      const url = parseUrl(req.url);
      const matching = routes.filter((r) => r.re.test(url.pathname));
      const route = matching.find((r) => r.method === req.method);
      if (auth && !route?.open && !auth(req, res, url.pathname)) return;
      if (!route) {
        if (!matching.length) {
          const p = problem(404, ErrorCodes.NOT_FOUND, `no route ${url.pathname}`, { field: 'url' });
          return send(404, { ...p, instance: url.pathname }, PROBLEM_CONTENT_TYPE);
        }
        const allow = [...new Set(matching.map((r) => r.method))].join(', ');
        if (req.method === 'OPTIONS') return send(204, '', 'text/plain', { allow });
        const p = problem(405, 'E_METHOD', `${req.method} not allowed on ${url.pathname} (allowed: ${allow})`);
        return send(405, { ...p, instance: url.pathname }, PROBLEM_CONTENT_TYPE, { allow });
      }
      const m = url.pathname.match(route.re) ?? [];
      const params = Object.fromEntries(route.names.map((n, i) => [n, m[i + 1] ?? '']));
      const query = parseQuery(route.query, url.searchParams);
      Promise.resolve()
        .then(() => route.handle({ req, params, query, url }))
        .then((r) => send(r.status, r.body, r.contentType, r.headers), fail);
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
