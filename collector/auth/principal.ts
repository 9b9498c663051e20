/**
 * Who is calling, decided in one place for REST and both gRPC APIs: an operator
 * (the REST bearer token, or a client certificate in the cni-bench-operator
 * organisation), an agent speaking for one node (a node token derived from the
 * collector's agent key, a client certificate in the cni-bench-agent
 * organisation whose CN is the node, or a projected ServiceAccount token the
 * API server vouches for, bound to its pod's node), or nobody.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

export type Principal =
  | { kind: 'operator'; via: 'token' | 'certificate' | 'open' }
  | { kind: 'agent'; node: string; via: 'node-token' | 'certificate' | 'service-account' | 'open' }
  | { kind: 'anonymous' };

/** Verifies a ServiceAccount token with the API server; the node its pod runs on, or undefined when not an agent's. */
export type TokenReviewer = (token: string) => Promise<string | undefined>;

export interface AuthSettings {
  /** The REST token; also accepted on gRPC as `authorization: Bearer`. */
  operatorToken?: string;
  /** Key node tokens are derived from (see nodeToken). */
  agentKey?: Buffer;
  /** Client certificates are verified by the TLS layer (mTLS). */
  mtls: boolean;
  tokenReview?: TokenReviewer;
}

export const AGENT_ORG = 'cni-bench-agent';
export const OPERATOR_ORG = 'cni-bench-operator';
const NODE_TOKEN_PREFIX = 'cnb-node';
/** Longest node name or agent id (a DNS subdomain). */
export const MAX_NODE_NAME = 253;

/**
 * The token that lets an agent speak for `node` and nothing else:
 * `cnb-node.<node>.<HMAC-SHA256(key, node)>`. Whoever holds the key (the lab,
 * an operator's provisioning) hands each node its own.
 */
export function nodeToken(key: Buffer, node: string): string {
  return `${NODE_TOKEN_PREFIX}.${Buffer.from(node).toString('base64url')}.${createHmac('sha256', key).update(`cni-bench-agent:${node}`).digest('base64url')}`;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time string equality (hashed first so lengths do not leak). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

function orgsOf(cert: PeerCertificate): string[] {
  const o = (cert.subject as unknown as Record<string, string | string[] | undefined> | undefined)?.O;
  return o === undefined ? [] : Array.isArray(o) ? o : [o];
}

export class Authenticator {
  constructor(private readonly s: AuthSettings) {}

  /** True when some credential exists: callers must then prove who they are. */
  get required(): boolean {
    return Boolean(this.s.operatorToken || this.s.agentKey || this.s.mtls || this.s.tokenReview);
  }

  /** Agents must prove their node (node token, agent certificate or ServiceAccount token). */
  get agentsRequired(): boolean {
    return Boolean(this.s.agentKey || this.s.mtls || this.s.tokenReview);
  }

  /** The principal behind a bearer token and/or a verified client certificate, asking the API server about ServiceAccount tokens. */
  async identify(bearer: string | undefined, cert: PeerCertificate | undefined): Promise<Principal> {
    const local = this.identifyLocal(bearer, cert);
    if (
      local.kind !== 'anonymous' ||
      !bearer ||
      !this.s.tokenReview ||
      bearer.length > 8192 ||
      bearer.startsWith(`${NODE_TOKEN_PREFIX}.`)
    )
      return local;
    const node = await this.s.tokenReview(bearer).catch(() => undefined);
    return node ? { kind: 'agent', node, via: 'service-account' } : local;
  }

  /** As identify, without the API server (REST: operators use the token). */
  identifyLocal(bearer: string | undefined, cert: PeerCertificate | undefined): Principal {
    if (bearer) {
      if (bearer.length > 8192) return { kind: 'anonymous' };
      if (this.s.operatorToken && sameSecret(bearer, this.s.operatorToken)) return { kind: 'operator', via: 'token' };
      const node = this.nodeOfToken(bearer);
      if (node) return { kind: 'agent', node, via: 'node-token' };
      return { kind: 'anonymous' };
    }
    if (cert && this.s.mtls && cert.subject) {
      const orgs = orgsOf(cert);
      const cn = typeof cert.subject.CN === 'string' ? cert.subject.CN : '';
      if (orgs.includes(OPERATOR_ORG)) return { kind: 'operator', via: 'certificate' };
      if (orgs.includes(AGENT_ORG) && cn && cn.length <= MAX_NODE_NAME)
        return { kind: 'agent', node: cn, via: 'certificate' };
    }
    if (!this.required) return { kind: 'operator', via: 'open' };
    return { kind: 'anonymous' };
  }

  private nodeOfToken(token: string): string | undefined {
    if (!this.s.agentKey) return undefined;
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== NODE_TOKEN_PREFIX) return undefined;
    const node = Buffer.from(parts[1]!, 'base64url').toString('utf8');
    if (!node || node.length > MAX_NODE_NAME) return undefined;
    return sameSecret(token, nodeToken(this.s.agentKey, node)) ? node : undefined;
  }

  /** Throws unless `p` may drive runs (RunService, MonitorService, REST /v1). */
  requireOperator(p: Principal): void {
    if (p.kind === 'operator') return;
    if (p.kind === 'agent')
      throw new CniBenchError(
        ErrorCodes.FORBIDDEN,
        `authorization: an agent identity (node '${p.node}') cannot use the operator API`,
        { details: { field: 'authorization' } },
      );
    throw new CniBenchError(
      ErrorCodes.UNAUTHENTICATED,
      'authorization: an operator credential is required (Bearer token or operator certificate)',
      { details: { field: 'authorization' } },
    );
  }

  /** Throws unless `p` may speak for `node`. Without agent credentials configured anyone may (open mode; the registry's lease still applies). */
  requireNode(p: Principal, node: string): void {
    if (!this.agentsRequired && (p.kind !== 'agent' || p.via === 'open')) return;
    if (p.kind === 'agent' && p.node === node) return;
    if (p.kind === 'agent')
      throw new CniBenchError(
        ErrorCodes.FORBIDDEN,
        `node_name: identity of node '${p.node}' cannot speak for node '${node.slice(0, 64)}'`,
        { details: { field: 'node_name' } },
      );
    throw new CniBenchError(
      ErrorCodes.UNAUTHENTICATED,
      'authorization: an agent identity is required (node token, agent certificate or ServiceAccount token)',
      { details: { field: 'authorization' } },
    );
  }
}

/** The bearer token of an `authorization` header or metadata value. */
export function bearerOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(value)?.[1];
}
