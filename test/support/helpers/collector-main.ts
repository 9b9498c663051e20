/**
 * The real collector binary (dist/collector/main.js) on port 0, its addresses
 * read from its "collector listening" log line, and a raw HTTP/1.1 client for
 * requests fetch() would normalise away (`//`, bare `*`, header floods).
 */
import { connect } from 'node:net';
import { COLLECTOR_MAIN, getJson, type Proc, startNode, waitFor } from './procs.js';

export interface CollectorMain {
  proc: Proc;
  grpc: string;
  http: string;
}

/** `args` with port-0 listeners on loopback, Kubernetes off and an in-memory store, unless `args` gives them. */
export function collectorArgs(args: string[]): string[] {
  const defaults = [
    '--grpc-listen',
    '127.0.0.1:0',
    '--http-host',
    '127.0.0.1',
    '--http-port',
    '0',
    '--kubernetes',
    'off',
    '--db',
    ':memory:',
  ];
  const given = new Set(args.filter((a) => a.startsWith('--')));
  const base: string[] = [];
  for (let i = 0; i < defaults.length; i += 2) if (!given.has(defaults[i]!)) base.push(defaults[i]!, defaults[i + 1]!);
  return [...base, ...args];
}

/**
 * Flags for a collector that a test kills and starts again: fixed ports (a restarted collector comes back where
 * its agents look, on the same store), heartbeats every 500 ms, an agent lost after `livenessMs`; plus `extra`.
 */
export function restartableCollectorArgs(
  o: { grpcListen: string; httpPort: number; db: string; livenessMs: number },
  extra: string[] = [],
): string[] {
  return collectorArgs([
    '--grpc-listen',
    o.grpcListen,
    '--http-port',
    String(o.httpPort),
    '--db',
    o.db,
    '--heartbeat-interval-ms',
    '500',
    '--liveness-timeout-ms',
    String(o.livenessMs),
    ...extra,
  ]);
}

/** How many agents the collector at `base` (its REST URL) calls connected. */
export async function connectedAgents(base: string, init?: RequestInit): Promise<number> {
  return (await getJson(`${base}/v1/agents`, init)).body.agents.filter((a: { connected: boolean }) => a.connected)
    .length;
}

/** Starts the collector binary with `collectorArgs(args)` and does not wait: for tests of how it refuses to start. */
export function spawnCollector(args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  return startNode(COLLECTOR_MAIN, collectorArgs(args), env);
}

/** Starts the collector with `args` (plus port-0 listeners on loopback unless given) and waits for it to listen. */
export async function startCollectorMain(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CollectorMain> {
  const proc = spawnCollector(args, env);
  const line = await waitFor(
    'the collector to listen',
    () => {
      if (proc.child.exitCode !== null) throw new Error(`collector exited ${proc.child.exitCode}: ${proc.output()}`);
      return proc
        .output()
        .split('\n')
        .find((l) => l.includes('"collector listening"'));
    },
    // Generous: on a shared machine at load 25 Node itself takes over a minute to start.
    180_000,
  ).catch((err: Error) => {
    proc.child.kill('SIGKILL');
    throw new Error(`${err.message}\n${proc.output()}`);
  });
  const j = JSON.parse(line) as { grpc: string; http: string };
  return { proc, grpc: j.grpc, http: j.http };
}

/** Sends `raw` bytes on a fresh connection; resolves with what came back (status line first) when the server closes or after `timeoutMs`. */
export function rawHttp(base: string, raw: string | Buffer, timeoutMs = 5000): Promise<string> {
  const u = new URL(base);
  return new Promise((resolve) => {
    const s = connect(Number(u.port), u.hostname);
    let out = '';
    const t = setTimeout(() => s.destroy(), timeoutMs);
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('error', () => undefined);
    s.on('close', () => {
      clearTimeout(t);
      resolve(out);
    });
    s.write(raw);
  });
}

/** The status code of a raw response, 0 when none came. */
export function rawStatus(response: string): number {
  return Number(/^HTTP\/1\.[01] (\d{3})/.exec(response)?.[1] ?? 0);
}
