/**
 * The REST API's operator check. The token comes from a file (a mounted
 * Secret) read once at start-up; the decision is the Authenticator's, the same
 * one RunService and MonitorService use. Only /v1/* is guarded: /healthz and
 * /metrics stay open for kubelet probes and Prometheus scrapes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CniBenchError, ErrorCodes, toWireStatus } from '../../core/errors.js';
import { Authenticator, bearerOf } from '../auth/principal.js';
import { readConfigFile } from '../config.js';
import { PROBLEM_CONTENT_TYPE, problem } from './problem.js';

/** Decides whether a request may proceed; answers 401/403 itself when not. */
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

/** The operator check over REST; with no operator token configured the REST API stays open (loopback only, see config). */
export function operatorAuth(auth: Authenticator, tokenConfigured: boolean): RestAuth {
  return (req, res, pathname) => {
    if (!tokenConfigured || !isGuarded(pathname)) return true;
    const bearer = bearerOf(req.headers.authorization);
    try {
      auth.requireOperator(auth.identifyLocal(bearer, undefined));
      return true;
    } catch (err) {
      const w = toWireStatus(err);
      const message =
        w.code === ErrorCodes.FORBIDDEN
          ? w.message
          : bearer
            ? 'bearer token not accepted'
            : 'missing Authorization: Bearer <token>';
      const body = { ...problem(w.http, w.code, message, { field: 'authorization' }), instance: pathname };
      res
        .writeHead(w.http, {
          'content-type': PROBLEM_CONTENT_TYPE,
          'www-authenticate': bearer ? 'Bearer error="invalid_token"' : 'Bearer',
        })
        .end(`${JSON.stringify(body)}\n`);
      return false;
    }
  };
}

/** A check for one token alone (tests and callers that have no Authenticator). */
export function bearerAuth(token: string): RestAuth {
  return operatorAuth(new Authenticator({ operatorToken: token, mtls: false }), true);
}
