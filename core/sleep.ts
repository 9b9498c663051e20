/**
 * The one abortable sleep. Waits `ms` milliseconds, or less when `signal`
 * aborts, and never rejects: every loop that sleeps between rounds (sampling,
 * probing, reconnecting, pacing a run) checks `signal.aborted` after it, and
 * an abort is not an error of the sleep. Without a signal it is a plain sleep.
 */
import { setTimeout as wait } from 'node:timers/promises';

export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  await wait(Math.max(0, ms), undefined, signal ? { signal } : {}).catch((err: unknown) => {
    if (!signal?.aborted) throw err;
  });
}
