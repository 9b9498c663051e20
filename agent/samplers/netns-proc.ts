/**
 * Where the sampler reads a network namespace's /proc/net files without
 * starting a tool per read: /proc/<pid>/net shows the namespace of <pid>. The
 * agent's own namespace is /proc/self/net; a host namespace given as
 * /proc/<pid>/ns/net (hostPID) is /proc/<pid>/net. Any other namespace (the
 * lab's /run/netns/<name>) gets an anchor: one `cat` entered into it, started
 * once and kept, whose stdin is a pipe from this process, so it ends when the
 * agent ends, however the agent ends.
 */
import { readlink, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { netnsArgv } from '../../core/netns.js';
import { type LongRunning, spawnLongRunning } from '../../core/process.js';

/** How long an anchor may take to be inside its namespace. */
const ANCHOR_READY_MS = 5000;

/** Pure: the /proc/<pid>/net directory for a namespace path, when one exists without an anchor. */
export function procNetWithoutAnchor(netnsPath: string): string | undefined {
  if (!netnsPath) return '/proc/self/net';
  const m = /^\/proc\/(\d+|self)\/ns\/net$/.exec(netnsPath);
  return m ? `/proc/${m[1]}/net` : undefined;
}

export class NetnsProcView {
  private anchor: { proc: LongRunning; ready: Promise<string> } | undefined;

  constructor(private readonly netnsPath: string) {}

  /** The /proc/<pid>/net directory of the namespace; starts the anchor on first use (and again if it ended). */
  async dir(): Promise<string> {
    const direct = procNetWithoutAnchor(this.netnsPath);
    if (direct) return direct;
    if (!this.anchor) {
      const proc = spawnLongRunning(...netnsArgv({ path: this.netnsPath }, 'cat', []), {
        tool: 'nsenter',
        stdin: 'pipe',
      });
      const anchor = { proc, ready: this.entered(proc) };
      this.anchor = anchor;
      void proc.exited.then(() => {
        if (this.anchor === anchor) this.anchor = undefined;
      });
      anchor.ready.catch(() => void this.close());
    }
    return this.anchor.ready;
  }

  /** Resolves once the anchor's namespace is the wanted one (nsenter enters it after it starts). */
  private async entered(proc: LongRunning): Promise<string> {
    const want = `net:[${(await stat(this.netnsPath)).ino}]`;
    const until = Date.now() + ANCHOR_READY_MS;
    while (proc.pid !== undefined && Date.now() < until) {
      const now = await readlink(`/proc/${proc.pid}/ns/net`).catch(() => '');
      if (now === want) return `/proc/${proc.pid}/net`;
      await sleep(5);
    }
    const ended = await Promise.race([proc.exited, sleep(10).then(() => undefined)]);
    throw new CniBenchError(
      ErrorCodes.TOOL_FAILED,
      `nsenter: could not enter ${this.netnsPath} for /proc reads${ended ? `: ${ended.stderr.trim() || `exit ${ended.exitCode}`}` : ''}`,
      { details: { tool: 'nsenter' } },
    );
  }

  async close(): Promise<void> {
    const a = this.anchor;
    this.anchor = undefined;
    await a?.proc.stop();
  }
}
