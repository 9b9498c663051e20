/**
 * Keeps the probe responder running in the node's host network namespace (a
 * Node process cannot listen in another namespace itself): started with
 * nsenter, ready once its port listens there, restarted when it died.
 */
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../core/log.js';
import { netnsArgv, netnsAt } from '../../core/netns.js';
import { type LongRunning, spawnLongRunning } from '../../core/process.js';
import { AGENT_NODE_FLAGS } from '../node-flags.js';
import { waitForListen } from '../readiness.js';

const MAIN = fileURLToPath(new URL('./host-responder-main.js', import.meta.url));

/** After a failed start, the next attempt waits this long (a taken port would otherwise cost a process start every round). */
const RETRY_MS = 5 * 60_000;

export class HostResponder {
  private proc: LongRunning | undefined;
  private alive = false;
  private notBeforeMs = 0;

  constructor(
    private readonly opts: { hostNetns: string; node: string; port: number; idleTimeoutMs: number; log: Logger },
  ) {}

  get running(): boolean {
    return this.alive;
  }

  /** Starts it unless it runs; resolves false (logged) when it cannot listen. */
  async ensure(signal: AbortSignal): Promise<boolean> {
    if (this.alive || signal.aborted || Date.now() < this.notBeforeMs) return this.alive;
    const { hostNetns, node, port, idleTimeoutMs, log } = this.opts;
    const [bin, args] = netnsArgv(netnsAt(hostNetns), process.execPath, [
      ...AGENT_NODE_FLAGS,
      MAIN,
      '--port',
      String(port),
      '--node',
      node,
      '--idle-ms',
      String(idleTimeoutMs),
    ]);
    const proc = spawnLongRunning(bin, args, { tool: 'probe-responder', signal });
    this.proc = proc;
    void proc.exited.then((r) => {
      this.alive = false;
      if (!signal.aborted)
        log.warn('host probe responder exited', { exitCode: r.exitCode, stderr: r.stderr.trim().slice(0, 300) });
    });
    try {
      await waitForListen(port, {
        timeoutMs: 10_000,
        signal,
        exited: proc.exited,
        ...(proc.pid !== undefined ? { pid: proc.pid } : {}),
      });
      this.alive = true;
    } catch (err) {
      log.warn('host probe responder did not start; pod-to-host probes to this node will fail', {
        port,
        error: (err as Error).message,
        retryInS: RETRY_MS / 1000,
      });
      this.notBeforeMs = Date.now() + RETRY_MS;
      await proc.stop();
    }
    return this.alive;
  }

  async stop(): Promise<void> {
    await this.proc?.stop();
  }
}
