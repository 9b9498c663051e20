/**
 * Writes a kubeconfig (JSON, which every client reads as YAML) for one
 * client-certificate user of the harness apiserver.
 */
import { writeFileSync } from 'node:fs';
import type { ClientCert } from './pki.js';

export function writeKubeconfig(path: string, server: string, caFile: string, user: ClientCert): string {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'harness', cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name: 'user', user: { 'client-certificate': user.cert, 'client-key': user.key } }],
    contexts: [{ name: 'harness', context: { cluster: 'harness', user: 'user' } }],
    'current-context': 'harness',
  };
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return path;
}
