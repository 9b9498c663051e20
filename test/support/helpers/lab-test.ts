/**
 * A test that runs labs in this process (runInLab): skipped without root,
 * given a warn-level logger and an abort signal that SIGINT/SIGTERM fire, so
 * an interrupted suite still removes its labs; the trap is removed afterwards.
 */
import { type TestContext, test } from 'node:test';
import { trapInterrupts } from '../../../core/interrupts.js';
import { createLogger, type Logger } from '../../../core/log.js';
import { notRoot } from './root.js';

export interface LabTestRun {
  log: Logger;
  signal: AbortSignal;
}

export function labTest(
  name: string,
  timeoutMs: number,
  fn: (t: TestContext, run: LabTestRun) => Promise<void>,
  skip: string | false = notRoot,
): void {
  test(name, { skip, timeout: timeoutMs }, async (t) => {
    const log = createLogger({ component: 'test' }, 'warn');
    const interrupts = trapInterrupts(log);
    try {
      await fn(t, { log, signal: interrupts.signal });
    } finally {
      interrupts.dispose();
    }
  });
}
