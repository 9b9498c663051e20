/**
 * Follows a run and prints where it is (report/progress.ts) on stderr: on a
 * terminal one line rewritten in place, a new line per phase, step or round;
 * elsewhere, or with `--log json`, one JSON line per change (and every 30 s),
 * in the logger's shape. Fed by polling the run: in the lab the store, for a
 * remote run GET /v1/runs/{id}.
 */
import { oneOfFlag } from '../core/flags.js';
import { type ProgressRun, progressJson, progressKey, progressOf, progressText } from '../report/progress.js';

export type LogStyle = 'auto' | 'text' | 'json';

export const logFlag = oneOfFlag<LogStyle>(['auto', 'text', 'json'], {
  help: 'progress on stderr: text for a terminal, JSON lines otherwise (auto: text when stderr is a TTY)',
  default: 'auto',
});

export interface ProgressSink {
  isTTY: boolean;
  write(s: string): void;
}

export interface Follower {
  /** Prints the last state (if it changed) and stops polling. */
  stop(): Promise<void>;
}

const HEARTBEAT_MS = 30_000;

export function followProgress(
  read: () => ProgressRun | undefined | Promise<ProgressRun | undefined>,
  o: { style: LogStyle; intervalMs?: number; sink?: ProgressSink; now?: () => number },
): Follower {
  const sink: ProgressSink = o.sink ?? {
    isTTY: Boolean(process.stderr.isTTY),
    write: (s) => void process.stderr.write(s),
  };
  const now = o.now ?? Date.now;
  const text = o.style === 'text' || (o.style === 'auto' && sink.isTTY);
  let lastKey = '';
  let lastPrint = 0;
  let open = false;
  let busy = false;
  let stopped = false;
  const tick = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      const run = await read();
      if (!run) return;
      const p = progressOf(run, now());
      const key = progressKey(p);
      const changed = key !== lastKey;
      if (text) {
        // A changed line stays on screen; the same line is rewritten with its clocks.
        sink.write(`${open && changed ? '\n' : '\r\x1b[2K'}${progressText(p)}`);
        open = true;
      } else if (changed || now() - lastPrint >= HEARTBEAT_MS) {
        sink.write(progressJson(p, now()));
        lastPrint = now();
      }
      lastKey = key;
    } catch {
      // A failed poll (collector briefly away) is not the run's failure; the next tick tries again.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), o.intervalMs ?? 1000);
  timer.unref();
  void tick();
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      while (busy) await new Promise((r) => setTimeout(r, 20));
      await tick();
      if (text && open) sink.write('\n');
    },
  };
}
