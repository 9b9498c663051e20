/**
 * The gRPC server's transport security, built once at start-up from config:
 * plaintext when no certificate is configured, TLS with a certificate and key,
 * mutual TLS (agents must present a certificate the CA signed) when a CA is set
 * too. Files are read here so a bad mount fails start-up naming the field.
 */
import { ServerCredentials } from '@grpc/grpc-js';
import { type CollectorConfig, readConfigFile } from '../config.js';

export type ServerTlsMode = 'insecure' | 'tls' | 'mtls';

export interface ServerTransport {
  credentials: ServerCredentials;
  mode: ServerTlsMode;
}

export function serverCredentials(
  config: Pick<CollectorConfig, 'tlsCertFile' | 'tlsKeyFile' | 'tlsCaFile'>,
): ServerTransport {
  if (!config.tlsCertFile) return { credentials: ServerCredentials.createInsecure(), mode: 'insecure' };
  const cert_chain = readConfigFile('tlsCertFile', config.tlsCertFile);
  const private_key = readConfigFile('tlsKeyFile', config.tlsKeyFile);
  const ca = config.tlsCaFile ? readConfigFile('tlsCaFile', config.tlsCaFile) : null;
  return {
    credentials: ServerCredentials.createSsl(ca, [{ cert_chain, private_key }], ca !== null),
    mode: ca ? 'mtls' : 'tls',
  };
}
