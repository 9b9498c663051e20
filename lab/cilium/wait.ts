/** Polls until a check yields a value (never a fixed sleep standing in for a condition). */
import { setTimeout as sleep } from 'node:timers/promises';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  pauseMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== null && (v as unknown) !== false) return v;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline)
      throw new CniBenchError(
        ErrorCodes.TIMEOUT,
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last: ${last})` : ''}`,
      );
    await sleep(pauseMs);
  }
}
