/**
 * Parses `cilium-dbg service list -o json` (the agent's GET /v1/service,
 * api/v1/models: ServiceSpec with frontend-address and backend-addresses): the
 * agent's own view of its Services, which the LB map decoding is checked
 * against. Pure; malformed output is an error naming cilium-dbg.
 */
import { parseError } from '../../core/errors.js';
import { parseToolJson } from '../../core/tool-json.js';

export interface CiliumService {
  id: number;
  address: string;
  port: number;
  protocol: string;
  /** "external" or "internal" (Cilium's lookup scope). */
  scope: string;
  /** "ip:port" of every backend, whatever its state. */
  backends: string[];
  /** Backends in state "active" (or with no state given). */
  activeBackends: string[];
}

export function parseCiliumServiceList(stdout: string): CiliumService[] {
  const doc = parseToolJson('cilium-dbg', stdout);
  if (!Array.isArray(doc)) throw parseError('cilium-dbg', stdout, 'expected a JSON array of services');
  return doc.map((s: unknown, i): CiliumService => {
    const spec = (s as { spec?: Record<string, unknown> })?.spec;
    const fe = spec?.['frontend-address'] as
      | { ip?: unknown; port?: unknown; protocol?: unknown; scope?: unknown }
      | undefined;
    if (!spec || !fe || typeof fe.ip !== 'string')
      throw parseError('cilium-dbg', stdout, `service ${i} has no spec.frontend-address.ip`);
    const raw = Array.isArray(spec['backend-addresses'])
      ? (spec['backend-addresses'] as { ip?: unknown; port?: unknown; state?: unknown }[])
      : [];
    const addr = (b: { ip?: unknown; port?: unknown }): string =>
      `${String(b.ip)}:${typeof b.port === 'number' ? b.port : 0}`;
    return {
      id: typeof spec.id === 'number' ? spec.id : 0,
      address: fe.ip,
      port: typeof fe.port === 'number' ? fe.port : 0,
      protocol: typeof fe.protocol === 'string' ? fe.protocol : '',
      scope: typeof fe.scope === 'string' ? fe.scope : 'external',
      backends: raw.map(addr),
      activeBackends: raw.filter((b) => b.state === undefined || b.state === 'active').map(addr),
    };
  });
}
