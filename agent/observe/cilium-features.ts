/**
 * What each Cilium agent says of Hubble and encryption, from its own API
 * (GET /v1/debuginfo on its socket, the call `cilium-dbg version` makes):
 * cilium-status.hubble.state with the observer's seen-flows counter (the flow
 * counter a Hubble condition must see move), and cilium-status.encryption.mode.
 */
import { request } from 'node:http';
import { parseError } from '../../core/errors.js';

const TOOL = 'cilium-agent API';

export interface CiliumFeatures {
  hubble: string;
  /** Flows the Hubble observer has seen; null while Hubble is off. */
  seenFlows: number | null;
  encryption: string;
}

/** Pure: the features from GET /v1/debuginfo's body; a body without them is a parse error naming the API. */
export function parseCiliumFeatures(body: string): CiliumFeatures {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    throw parseError(TOOL, body, 'GET /v1/debuginfo is not JSON');
  }
  const status = (doc as Record<string, unknown> | null)?.['cilium-status'] as Record<string, unknown> | undefined;
  const hubble = status?.hubble as { state?: string; observer?: { 'seen-flows'?: number } } | undefined;
  const encryption = status?.encryption as { mode?: string } | undefined;
  if (!hubble?.state || !encryption?.mode)
    throw parseError(TOOL, body, 'no cilium-status.hubble.state or cilium-status.encryption.mode in GET /v1/debuginfo');
  const seen = hubble.observer?.['seen-flows'];
  return { hubble: hubble.state, seenFlows: typeof seen === 'number' ? seen : null, encryption: encryption.mode };
}

export function readCiliumFeatures(socket: string): Promise<CiliumFeatures> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, path: '/v1/debuginfo', timeout: 15_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => {
        try {
          resolve(parseCiliumFeatures(body));
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${TOOL}: GET /v1/debuginfo on ${socket} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
