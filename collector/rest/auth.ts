/**
 * Bearer-token check for the REST API. The token comes from a file (a mounted
 * Secret) read once at start-up. Only /v1/* is guarded: /healthz and /metrics
 * stay open for kubelet probes and Prometheus scrapes.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { readConfigFile } from '../config.js';

/** Decides whether a request may proceed; answers 401 itself when not. */
export type RestAuth = (req: IncomingMessage, res: ServerResponse, pathname: string) => boolean;

/** Reads and trims the token file; an empty token is refused (it would let anyone in with `Bearer `). */
export function loadRestToken(path: string): string {
  const token = readConfigFile('restTokenFile', path).toString('utf8').trim();
  if (!token) {
    throw new CniBenchError(ErrorCodes.VALIDATION, `invalid collector config: restTokenFile: '${path}' is empty`, {
      details: { field: 'restTokenFile', path, issues: [{ path: 'restTokenFile', message: `'${path}' is empty` }] },
    });
  }
  return token;
}

export function isGuarded(pathname: string): boolean {
  return pathname === '/v1' || pathname.startsWith('/v1/');
}

// Hashing first gives equal-length inputs, so timingSafeEqual leaks neither content nor length.
const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Builds the check for one token. */
export function bearerAuth(token: string): RestAuth {
  const expected = digest(token);
  return (req, res, pathname) => {
    if (!isGuarded(pathname)) return true;
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '');
    if (m && timingSafeEqual(digest(m[1]!), expected)) return true;
    const message = m ? 'bearer token not accepted' : 'missing Authorization: Bearer <token>';
    res
      .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': m ? 'Bearer error="invalid_token"' : 'Bearer' })
      .end(`${JSON.stringify({ code: ErrorCodes.UNAUTHENTICATED, message })}\n`);
    return false;
  };
}
