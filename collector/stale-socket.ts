/**
 * A unix socket a collector listened on survives the collector when it is
 * killed (SIGKILL, OOM, a node crash): the file stays, and binding the path
 * again fails with EADDRINUSE, so a collector restarted on the same flags
 * could never start. Before binding, a socket file nobody accepts connections
 * on is removed; one a live process still serves is left alone and refused
 * with a line naming the path.
 */
import { lstat, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { CniBenchError, ErrorCodes } from '../core/errors.js';

/** Whether a process accepts connections on the unix socket at `path`. */
function served(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Removes a stale socket at `path` (true when one was removed); refuses one a live process serves. */
export async function removeStaleSocket(path: string): Promise<boolean> {
  const st = await lstat(path).catch(() => undefined);
  if (!st) return false;
  if (!st.isSocket())
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `grpcListen: '${path}' exists and is not a socket; remove it or choose another path`,
      { details: { field: 'grpcListen', path } },
    );
  if (await served(path))
    throw new CniBenchError(
      ErrorCodes.CONFLICT,
      `grpcListen: another process is listening on '${path}'; stop it or choose another path`,
      { details: { field: 'grpcListen', path } },
    );
  await unlink(path);
  return true;
}

/** The file path of a gRPC `unix:` listen address (`unix:/p`, `unix:///p`), or undefined for a TCP one. */
export function unixSocketPath(listen: string): string | undefined {
  if (listen.startsWith('unix://')) return listen.slice('unix://'.length);
  if (listen.startsWith('unix:')) return listen.slice('unix:'.length);
  return undefined;
}
