/**
 * What a node's cilium-agent says of itself through its own API socket: its
 * version (GET /v1/debuginfo's cilium-version, the call `cilium-dbg version`
 * makes: cilium-dbg/cmd/version.go), and from the same answer's cilium-status
 * whether it replaces kube-proxy and how it routes between nodes. The socket
 * is the agent's default (--socket-path, /var/run/cilium/cilium.sock,
 * pkg/defaults) reached through /proc/<agent pid>/root, so the cilium-agent's
 * own mount namespace resolves it (a lab node's private /run, a cluster
 * agent's container). The parser is pure and tested on a captured answer; a
 * malformed one is an error naming the cilium-agent API, never a blank.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { CniBenchError, ErrorCodes, parseError } from '../../core/errors.js';
import { parseToolJson } from '../../core/tool-json.js';
import type { CiliumAgentStatus } from '../../gen/cnibench/v1/agent.js';

export const CILIUM_API_TOOL = 'cilium-agent API';
/** In the agent's own mount namespace: /var/run/cilium is /run/cilium on every image Cilium ships (an absolute symlink that /proc/<pid>/root would resolve in ours). */
export const CILIUM_SOCKET_PATHS = ['/run/cilium/cilium.sock', '/var/run/cilium/cilium.sock'] as const;

/** Pure: the agent's --socket-path from its NUL-separated cmdline, when given. */
export function socketPathFromCmdline(cmdline: string): string | undefined {
  const args = cmdline.split('\0');
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a.startsWith('--socket-path=')) return a.slice('--socket-path='.length) || undefined;
    if (a === '--socket-path' && args[i + 1]) return args[i + 1];
  }
  return undefined;
}

/** Pure: the paths to try, as the root mount namespace reaches them through /proc/<pid>/root. */
export function socketCandidates(procRoot: string, pid: number, cmdline: string): string[] {
  const own = socketPathFromCmdline(cmdline);
  return [...(own ? [own] : []), ...CILIUM_SOCKET_PATHS].map((p) => join(procRoot, String(pid), 'root', p));
}

/** Pure: the agent's status from GET /v1/debuginfo's body (api/v1/openapi.yaml DebugInfo, StatusResponse). */
export function parseCiliumDebuginfo(body: string): Omit<CiliumAgentStatus, 'socket' | 'agentPid'> {
  const doc = parseToolJson(CILIUM_API_TOOL, body) as Record<string, unknown> | null;
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw parseError(CILIUM_API_TOOL, body, 'expected a DebugInfo object');
  const full = doc['cilium-version'];
  if (typeof full !== 'string' || !full.trim())
    throw parseError(CILIUM_API_TOOL, body, 'no cilium-version in GET /v1/debuginfo');
  const version = full.trim().split(/\s+/)[0] as string;
  if (!/^v?\d+\.\d+/.test(version))
    throw parseError(CILIUM_API_TOOL, body, `cilium-version '${full}' does not start with a version`);
  const status = (doc['cilium-status'] ?? {}) as Record<string, unknown>;
  const kpr = (status['kube-proxy-replacement'] ?? {}) as { mode?: unknown };
  const routing = (status.routing ?? {}) as { 'inter-host-routing-mode'?: unknown; 'tunnel-protocol'?: unknown };
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  return {
    version: version.replace(/^v/, ''),
    versionFull: full.trim(),
    kubeProxyReplacement: str(kpr.mode),
    routing: str(routing['inter-host-routing-mode']),
    tunnelProtocol: str(routing['tunnel-protocol']),
  };
}

/** GET `path` from the agent's API on a unix socket; the body, or an error naming the socket. */
export function ciliumApiGet(socket: string, path: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, path, method: 'GET', timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode === 200) resolve(body);
        else
          reject(
            new CniBenchError(
              ErrorCodes.TOOL_FAILED,
              `${CILIUM_API_TOOL}: GET ${path} on ${socket}: HTTP ${res.statusCode}: ${body.slice(0, 200)}`,
            ),
          );
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', (err) =>
      reject(new CniBenchError(ErrorCodes.TOOL_FAILED, `${CILIUM_API_TOOL}: GET ${path} on ${socket}: ${err.message}`)),
    );
    req.end();
  });
}
