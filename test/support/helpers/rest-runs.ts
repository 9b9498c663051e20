/**
 * A collector's runs driven from outside, through its REST API at `url`: post
 * a scenario, wait for the agents to connect, and wait for a run to end,
 * each failure naming what was awaited.
 */
import assert from 'node:assert/strict';
import { connectedAgents } from './collector-main.js';
import { getJson, waitFor } from './procs.js';

/** Posts `scenario` to /v1/runs, asserts it was created (201) and returns the run's id. */
export async function postRun(url: string, scenario: unknown): Promise<string> {
  const created = await getJson(`${url}/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(scenario),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id as string;
}

/** The run `id` as /v1/runs/{id} returns it once it succeeded, failed or was cancelled (read every 500 ms). */
export async function runEnded(url: string, id: string, timeoutMs: number, what = 'the run to end'): Promise<any> {
  return waitFor(
    what,
    async () => {
      const r = (await getJson(`${url}/v1/runs/${id}`)).body;
      return ['succeeded', 'failed', 'cancelled'].includes(r.state) ? r : undefined;
    },
    timeoutMs,
    500,
  );
}

/** Waits until the collector calls `count` agents connected. */
export async function agentsConnected(url: string, count: number, timeoutMs: number): Promise<void> {
  await waitFor(`${count} agents`, async () => (await connectedAgents(url)) === count, timeoutMs);
}

/** Waits until run `id`'s apply phase succeeded (its condition in force), failing if the run ends first. */
export async function untilApplied(url: string, id: string, what = 'the condition in force'): Promise<void> {
  await waitFor(
    what,
    async () => {
      const r = (await getJson(`${url}/v1/runs/${id}`)).body;
      if (r.state !== 'running' && r.state !== 'pending') throw new Error(`run ended first: ${r.state} ${r.reason}`);
      return (r.phases as { name: string; state: string }[]).some(
        (p) => p.name.startsWith('apply') && p.state === 'succeeded',
      )
        ? true
        : undefined;
    },
    600_000,
    500,
  );
}
