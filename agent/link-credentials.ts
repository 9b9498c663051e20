/**
 * The agent link's transport security, built once at start-up from config:
 * TLS verified against the configured CA when one is set (with a client
 * certificate for mTLS, and a server-name override when the address is not the
 * name in the collector's certificate), plaintext otherwise. Files are read
 * here so a bad mount stops the agent naming the field.
 */
import { readFileSync } from 'node:fs';
import { type ChannelCredentials, type ChannelOptions, credentials } from '@grpc/grpc-js';
import { type AgentConfig, readConfigFile } from './config.js';

export interface LinkTransport {
  credentials: ChannelCredentials;
  /** Channel options the transport needs (the server-name override). */
  options: ChannelOptions;
  mode: 'insecure' | 'tls' | 'mtls';
  /** The bearer token sent on every call (read from tokenFile each time it is asked for), '' without one. */
  token: () => string;
}

/** The token file's content, read now (a rotated ServiceAccount token is picked up at the next registration). */
function tokenReader(path: string): () => string {
  if (!path) return () => '';
  readConfigFile('tokenFile', path);
  return () => {
    try {
      return readFileSync(path, 'utf8').trim();
    } catch {
      return '';
    }
  };
}

export function linkCredentials(
  config: Pick<AgentConfig, 'tlsCaFile' | 'tlsCertFile' | 'tlsKeyFile' | 'tlsServerName'> &
    Partial<Pick<AgentConfig, 'tokenFile'>>,
): LinkTransport {
  const token = tokenReader(config.tokenFile ?? '');
  if (!config.tlsCaFile) return { credentials: credentials.createInsecure(), options: {}, mode: 'insecure', token };
  const ca = readConfigFile('tlsCaFile', config.tlsCaFile);
  const cert = config.tlsCertFile ? readConfigFile('tlsCertFile', config.tlsCertFile) : null;
  const key = config.tlsKeyFile ? readConfigFile('tlsKeyFile', config.tlsKeyFile) : null;
  return {
    credentials: credentials.createSsl(ca, key, cert),
    options: config.tlsServerName ? { 'grpc.ssl_target_name_override': config.tlsServerName } : {},
    mode: cert ? 'mtls' : 'tls',
    token,
  };
}
