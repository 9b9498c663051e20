/**
 * One control-plane process (of the lab or the test harness): started with an argument array,
 * its output appended to <dir>/<name>.log (shown when start-up fails), stopped
 * with SIGTERM and, after a grace period, SIGKILL.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';

export interface Component {
  name: string;
  pid: number;
  exitCode(): number | undefined;
  tail(lines: number): string;
  stop(): Promise<void>;
}

export function startComponent(
  dir: string,
  name: string,
  binary: string,
  args: string[],
  env?: NodeJS.ProcessEnv,
): Component {
  const logPath = join(dir, `${name}.log`);
  const fd = openSync(logPath, 'a');
  const child = spawn(binary, args, { stdio: ['ignore', fd, fd], ...(env ? { env } : {}) });
  closeSync(fd);
  let code: number | undefined;
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (c, sig) => {
      // As a shell reports it: 128 + the signal's number (137 for SIGKILL).
      code = c ?? (sig ? 128 + (constants.signals[sig] ?? 0) : 0);
      resolve();
    }),
  );
  child.on('error', () => (code ??= 127));
  return {
    name,
    pid: child.pid ?? -1,
    exitCode: () => code,
    tail: (lines) => {
      try {
        return readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      } catch {
        return '(no log)';
      }
    },
    stop: async () => {
      if (code !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
