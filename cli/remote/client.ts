/**
 * A small client of the collector's REST API for the remote commands (run,
 * runs, report, cancel, compare, cluster, agents). Plain node:http(s) so a
 * private CA can be given; the operator token goes in as a bearer. A refusal
 * becomes the CniBenchError whose code the collector sent (toWireStatus is the
 * other end), so a bad scenario exits 2 with the field named, as in the lab.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CniBenchError, type ErrorCode, ErrorCodes } from '../../core/errors.js';

/** Responses larger than this are refused (a report of a long sweep is a few MB). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
const TIMEOUT_MS = 30_000;

export interface CollectorEndpoint {
  /** Base URL, e.g. http://127.0.0.1:8080 or https://collector.example:8443. */
  url: string;
  token?: string;
  /** PEM CA bundle that signs the collector's REST certificate. */
  ca?: Buffer;
  /** The name the certificate must carry when the URL's host is not it (a port-forward to 127.0.0.1). */
  serverName?: string;
  /** How the URL reaches the collector, for errors (e.g. "port-forward to pod ns/name"). */
  via?: string;
  /** Why the last connection through the way in failed (a port-forward stream's error). */
  viaError?: () => Error | undefined;
  /** Closes what connect() opened for this endpoint (a port-forward). */
  close?: () => Promise<void>;
}

export interface Reply {
  status: number;
  contentType: string;
  text: string;
}

const KNOWN_CODES = new Set<string>(Object.values(ErrorCodes));

/** The collector's error body (`{code, message, ...}` or problem+json `{title, detail, code}`) as a coded error. */
export function replyError(method: string, path: string, r: Reply): CniBenchError {
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(r.text) as Record<string, unknown>;
  } catch {
    // not JSON: the text itself is shown
  }
  const code = typeof body.code === 'string' && KNOWN_CODES.has(body.code) ? (body.code as ErrorCode) : undefined;
  const message =
    (typeof body.message === 'string' && body.message) ||
    (typeof body.detail === 'string' && body.detail) ||
    (typeof body.title === 'string' && body.title) ||
    r.text.slice(0, 300).trim() ||
    `HTTP ${r.status}`;
  const byStatus: Record<number, ErrorCode> = {
    400: ErrorCodes.VALIDATION,
    401: ErrorCodes.UNAUTHENTICATED,
    403: ErrorCodes.FORBIDDEN,
    404: ErrorCodes.NOT_FOUND,
    409: ErrorCodes.CONFLICT,
  };
  return new CniBenchError(code ?? byStatus[r.status] ?? ErrorCodes.INTERNAL, `collector: ${message}`, {
    details: { ...body, status: r.status, request: `${method} ${path}` },
  });
}

export class CollectorClient {
  constructor(readonly endpoint: CollectorEndpoint) {}

  /** Closes the way in connect() opened (a port-forward); a no-op for a plain URL. */
  async close(): Promise<void> {
    await this.endpoint.close?.();
  }

  /** One request; resolves with any status (callers decide), rejects only when the collector cannot be reached. */
  send(method: string, path: string, body?: unknown): Promise<Reply> {
    const url = new URL(path, this.endpoint.url);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.endpoint.token) headers.authorization = `Bearer ${this.endpoint.token}`;
    if (payload)
      Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method,
          headers,
          timeout: TIMEOUT_MS,
          ...(this.endpoint.ca ? { ca: this.endpoint.ca } : {}),
          ...(this.endpoint.serverName ? { servername: this.endpoint.serverName } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_RESPONSE_BYTES) req.destroy(new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`));
            else chunks.push(c);
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              contentType: String(res.headers['content-type'] ?? ''),
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      req.on('error', (err) => {
        const via = this.endpoint.viaError?.();
        if (via instanceof CniBenchError) return reject(via);
        const how = this.endpoint.via ? ` through ${this.endpoint.via}` : '';
        const why = `${(err as NodeJS.ErrnoException).code ?? err.message}${via ? `; ${via.message}` : ''}`;
        const who = this.endpoint.via ? 'collector' : '--collector';
        reject(
          new CniBenchError(ErrorCodes.NOT_FOUND, `${who}: cannot reach ${this.endpoint.url}${how} (${why})`, {
            cause: via ?? err,
            details: { field: '--collector', url: this.endpoint.url },
          }),
        );
      });
      req.end(payload);
    });
  }

  /** A 2xx reply's JSON body; anything else throws the collector's error. */
  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await this.send(method, path, body);
    if (r.status < 200 || r.status > 299) throw replyError(method, path, r);
    try {
      return JSON.parse(r.text) as T;
    } catch (err) {
      throw new CniBenchError(ErrorCodes.PARSE, `collector: ${method} ${path} answered ${r.status} with no JSON`, {
        cause: err,
        details: { sample: r.text.slice(0, 200) },
      });
    }
  }
}
