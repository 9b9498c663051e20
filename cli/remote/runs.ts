/**
 * What the remote commands share about runs: the run view GET /v1/runs/{id}
 * returns, fetching a report model to render here (so a newer CLI renders
 * every format against any collector), and waiting for a run to end.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { ProgressRun } from '../../report/progress.js';
import type { ReportModel } from '../../report/report.js';
import type { CollectorClient } from './client.js';

export type RunView = ProgressRun & { name?: string; reason: string };

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

/** A run id as the collector makes them; anything else is refused before a request is sent. */
export function checkRunId(id: string | undefined, field = 'RUN'): string {
  if (!id || !/^[\w-]{1,128}$/.test(id))
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `${field}: a run id (letters, digits, _ and -), got '${(id ?? '').slice(0, 64)}'`,
      {
        details: { field },
      },
    );
  return id;
}

export function getRun(client: CollectorClient, id: string): Promise<RunView> {
  return client.json<RunView>('GET', `v1/runs/${encodeURIComponent(id)}`);
}

export function fetchReport(client: CollectorClient, id: string): Promise<ReportModel> {
  return client.json<ReportModel>('GET', `v1/runs/${encodeURIComponent(id)}/report?format=json`);
}

/** Polls until the run ends (or `signal` aborts, or `timeoutMs` passes); returns the last view. */
export async function waitForEnd(
  client: CollectorClient,
  id: string,
  o: { intervalMs: number; signal?: AbortSignal; timeoutMs?: number },
): Promise<RunView> {
  const deadline = o.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + o.timeoutMs;
  for (;;) {
    const run = await getRun(client, id);
    if (TERMINAL.has(run.state) || o.signal?.aborted || Date.now() > deadline) return run;
    await sleep(o.intervalMs, undefined, o.signal ? { signal: o.signal } : {}).catch(() => undefined);
  }
}
