/**
 * `cni-bench run`: starts a run on a collector (in a cluster, or any
 * collector's REST API), follows its progress, and prints its report in the
 * lab's formats. Ctrl-C cancels the run on the collector (its agents clean
 * up) and still prints what was measured; `--detach` only starts it.
 */
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { customFlag, type FlagValues, numberFlag, switchFlag } from '../core/flags.js';
import { exitCodeFor, trapInterrupts } from '../core/interrupts.js';
import { renderReport } from '../report/report-formats.js';
import { type CliContext, defineCommand } from './command.js';
import { formatFlag } from './common-flags.js';
import { followProgress, logFlag } from './progress.js';
import type { CollectorClient } from './remote/client.js';
import { REMOTE_NOTES, remoteFlags, withCollector } from './remote/connect.js';
import { fetchReport, getRun, type RunView, TERMINAL, waitForEnd } from './remote/runs.js';
import { readScenarioFile } from './scenario-file.js';

const flags = {
  scenario: customFlag({
    help: 'scenario file, JSON or YAML (.yaml/.yml); schema: docs/scenario.schema.json (default: the study defaults)',
    value: 'FILE',
    default: undefined as string | undefined,
    parse: (t) => t,
  }),
  format: formatFlag,
  detach: switchFlag({
    help: 'start the run, print its id and exit (follow it later with `cni-bench report RUN --wait`)',
  }),
  log: logFlag,
  poll: numberFlag({ help: 'seconds between polls of the run', value: 'S', default: 1, min: 0.2 }),
  ...remoteFlags,
};

/** Cancel requested on the first interrupt: waits this long for the run's end state before printing. */
const CANCEL_WAIT_MS = 60_000;

async function run(v: FlagValues<typeof flags>, ctx: CliContext): Promise<number> {
  const scenario = v.scenario ? await readScenarioFile(v.scenario) : {};
  return withCollector(v, (client) => startAndFollow(client, scenario, v, ctx));
}

async function startAndFollow(
  client: CollectorClient,
  scenario: unknown,
  v: FlagValues<typeof flags>,
  ctx: CliContext,
): Promise<number> {
  const created = await client.json<RunView>('POST', 'v1/runs', scenario);
  if (v.detach) {
    ctx.stdout(v.format === 'json' ? `${JSON.stringify(created, null, 2)}\n` : `${created.id}\n`);
    return 0;
  }
  ctx.log.info('run started', {
    runId: created.id,
    collector: client.endpoint.url,
    ...(client.endpoint.via ? { via: client.endpoint.via } : {}),
  });
  const interrupts = trapInterrupts(ctx.log);
  const intervalMs = v.poll * 1000;
  let last: RunView = created;
  const follower = followProgress(() => last, { style: v.log, intervalMs });
  try {
    while (!TERMINAL.has(last.state) && !interrupts.signal.aborted) {
      await new Promise((r) => setTimeout(r, intervalMs));
      last = await getRun(client, created.id).catch(() => last);
    }
    if (interrupts.signal.aborted && !TERMINAL.has(last.state)) {
      await client.json('DELETE', `v1/runs/${encodeURIComponent(created.id)}`).catch((err: unknown) => {
        if (!(err instanceof CniBenchError && err.code === ErrorCodes.CONFLICT)) throw err;
      });
      last = await waitForEnd(client, created.id, { intervalMs, timeoutMs: CANCEL_WAIT_MS });
    }
  } finally {
    await follower.stop();
    interrupts.dispose();
  }
  ctx.stdout(renderReport(await fetchReport(client, created.id), v.format).body);
  if (interrupts.received()) return exitCodeFor(interrupts.received());
  return last.state === 'succeeded' ? 0 : 1;
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench run',
    summary:
      "Starts a run on a collector (the chart's, or any collector's REST API), shows its progress on stderr and prints its report when it ends. Ctrl-C cancels the run on the collector and prints what was measured.",
    flags,
    examples: [
      'cni-bench run --release cni-bench-agent --namespace cni-bench --scenario scenario.yaml',
      'cni-bench run --collector http://127.0.0.1:8080 --token-file ./token --scenario scenario.yaml',
      'cni-bench run --collector https://collector:8080 --ca-file ca.pem --token-file token --format html > report.html',
      'cni-bench run --detach --collector http://127.0.0.1:8080',
    ],
    notes: [
      'Exit codes: 0 the run succeeded, 1 it failed or the collector refused it, 2 bad flags or scenario (the field is named), 130/143 interrupted (the run was cancelled).',
      ...REMOTE_NOTES,
    ],
  },
  run: (values, _p, ctx) => run(values, ctx),
});
