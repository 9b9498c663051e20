/**
 * SIGINT/SIGTERM turned into an AbortSignal, so a command that owns a lab or a
 * run can clean up on an interrupt instead of dying with it; and the exit code
 * a shell expects after such an interrupt.
 */
import type { Logger } from './log.js';

export interface Interrupts {
  signal: AbortSignal;
  /** The signal that interrupted, if any. */
  received(): NodeJS.Signals | undefined;
  dispose(): void;
}

export function trapInterrupts(log: Logger): Interrupts {
  const abort = new AbortController();
  let got: NodeJS.Signals | undefined;
  const on = (sig: NodeJS.Signals): void => {
    if (got) return;
    got = sig;
    log.warn('interrupted: cleaning up', { signal: sig });
    abort.abort();
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    signal: abort.signal,
    received: () => got,
    dispose: () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    },
  };
}

export function exitCodeFor(sig: NodeJS.Signals | undefined): number {
  return sig === 'SIGTERM' ? 143 : 130;
}
