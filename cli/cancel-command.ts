/** `cni-bench cancel RUN`: asks the collector to cancel a run; `--wait` waits for its end state. */

import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { type FlagValues, switchFlag } from '../core/flags.js';
import { type CliContext, defineCommand } from './command.js';
import { REMOTE_NOTES, remoteFlags, withCollector } from './remote/connect.js';
import { checkRunId, type RunView, waitForEnd } from './remote/runs.js';

const flags = {
  wait: switchFlag({ help: 'wait (up to 2 minutes) until the agents have cleaned up and the run has ended' }),
  ...remoteFlags,
};

async function cancel(v: FlagValues<typeof flags>, positionals: readonly string[], ctx: CliContext): Promise<number> {
  if (positionals.length !== 1)
    throw new CniBenchError(ErrorCodes.VALIDATION, `RUN: give exactly one run id, got ${positionals.length}`, {
      details: { field: 'RUN' },
    });
  const id = checkRunId(positionals[0]);
  const run = await withCollector(v, async (client) => {
    const r = await client.json<RunView>('DELETE', `v1/runs/${encodeURIComponent(id)}`);
    return v.wait ? waitForEnd(client, id, { intervalMs: 500, timeoutMs: 120_000 }) : r;
  });
  ctx.stdout(`${run.id} ${run.state}${run.reason ? ` (${run.reason})` : ''}\n`);
  return v.wait && run.state !== 'cancelled' ? 1 : 0;
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench cancel',
    summary: 'Cancels a running run on a collector: its jobs stop and the agents clean up; prints the run state.',
    flags,
    positionals: 'RUN',
    examples: [
      'cni-bench cancel r1a2b3c --namespace cni-bench --wait',
      'cni-bench cancel r1a2b3c --collector http://127.0.0.1:8080 --token-file ./token --wait',
    ],
    notes: [
      'Exit codes: 0 cancel requested (with --wait: the run ended cancelled), 1 not found, already ended (409) or not cancelled in time, 2 bad flags.',
      ...REMOTE_NOTES,
    ],
  },
  run: (values, positionals, ctx) => cancel(values, positionals, ctx),
});
