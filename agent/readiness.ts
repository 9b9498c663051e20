/**
 * A server is ready when its socket is in LISTEN state in this network
 * namespace. Reading /proc/net/tcp{,6} proves that without opening a connection
 * (which some servers, iperf3 among them, would count as a test).
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { parseListeningPorts } from './samplers/proc-net-tcp.js';

/** Ports in LISTEN in this network namespace, or in that of process `pid` (a server started in the host's). */
async function listening(pid?: number): Promise<Set<number>> {
  const ports = new Set<number>();
  const dir = pid === undefined ? '/proc/net' : `/proc/${pid}/net`;
  for (const file of [`${dir}/tcp`, `${dir}/tcp6`]) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (text) for (const p of parseListeningPorts(text)) ports.add(p);
  }
  return ports;
}

/** Resolves once `port` listens; rejects on timeout, abort, or when `exited` settles first. */
export async function waitForListen(
  port: number,
  opts: { timeoutMs: number; signal?: AbortSignal; exited?: Promise<unknown>; pid?: number },
): Promise<void> {
  let gone = false;
  void opts.exited?.then(
    () => (gone = true),
    () => (gone = true),
  );
  const deadline = Date.now() + opts.timeoutMs;
  while (Date.now() < deadline) {
    if ((await listening(opts.pid)).has(port)) return;
    if (gone)
      throw new CniBenchError(ErrorCodes.TOOL_FAILED, `server exited before listening on port ${port}`, {
        details: { port },
      });
    if (opts.signal?.aborted) throw new CniBenchError(ErrorCodes.CANCELLED, `cancelled while waiting for port ${port}`);
    await sleep(50);
  }
  throw new CniBenchError(ErrorCodes.TIMEOUT, `no listener on port ${port} after ${opts.timeoutMs} ms`, {
    details: { port },
  });
}
