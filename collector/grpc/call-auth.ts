/**
 * The caller of a gRPC call as an auth Principal: the bearer token in its
 * `authorization` metadata and the client certificate TLS verified. The
 * operator check wraps every RunService and MonitorService handler here, so
 * the two operator APIs cannot drift apart.
 */
import { Metadata, type ServerUnaryCall, type ServiceError, type sendUnaryData } from '@grpc/grpc-js';
import { toWireStatus } from '../../core/errors.js';
import { type Authenticator, bearerOf, type Principal } from '../auth/principal.js';

interface AuthCall {
  metadata: Metadata;
  getAuthContext?: () => { sslPeerCertificate?: import('node:tls').PeerCertificate } | null;
}

export function principalOf(auth: Authenticator, call: AuthCall): Promise<Principal> {
  const header = call.metadata.get('authorization')[0];
  let cert: import('node:tls').PeerCertificate | undefined;
  try {
    cert = call.getAuthContext?.()?.sslPeerCertificate;
  } catch {
    cert = undefined;
  }
  return auth.identify(bearerOf(header), cert && Object.keys(cert).length ? cert : undefined);
}

/** Maps any error to a gRPC status with the stable code in metadata. */
export function toServiceError(err: unknown): Partial<ServiceError> {
  const w = toWireStatus(err);
  const metadata = new Metadata();
  metadata.set('cni-bench-error-code', w.code);
  return { code: w.grpc, details: wireText(w.message), metadata };
}

/**
 * Status details as grpc-js can send them: well-formed UTF-16 (it URI-encodes
 * the text, and a lone surrogate a client put in a name throws there, outside
 * any handler, and takes the process down) and bounded.
 */
export function wireText(text: string): string {
  const t = text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
  return t.length > 1024 ? `${t.slice(0, 1021)}...` : t;
}

/** A unary handler that runs `fn` only for an operator; errors map through toWireStatus. */
export function operatorUnary<Req, Res>(auth: Authenticator, fn: (req: Req) => Res | Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, cb: sendUnaryData<Res>): void => {
    principalOf(auth, call)
      .then((p) => {
        auth.requireOperator(p);
        return fn(call.request);
      })
      .then(
        (res) => cb(null, res),
        (err: unknown) => cb(toServiceError(err)),
      );
  };
}
