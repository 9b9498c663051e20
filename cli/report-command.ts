/**
 * `cni-bench report RUN`: a run's report in any format, from a collector
 * (`--collector`, or the in-cluster one with `--release`/`--context`) or from the local store of lab runs (`--db`). `--wait`
 * follows a running run to its end first.
 */
import { existsSync } from 'node:fs';
import { Store } from '../collector/index.js';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { type FlagValues, switchFlag } from '../core/flags.js';
import { buildReport, type ReportModel } from '../report/report.js';
import { renderReport } from '../report/report-formats.js';
import { type CliContext, defineCommand } from './command.js';
import { dbFlag, formatFlag } from './common-flags.js';
import { followProgress, logFlag } from './progress.js';
import type { CollectorClient } from './remote/client.js';
import { REMOTE_NOTES, remoteFlags, wantsRemote, withCollector } from './remote/connect.js';
import { checkRunId, fetchReport, getRun, type RunView, TERMINAL } from './remote/runs.js';

const flags = {
  format: formatFlag,
  wait: switchFlag({ help: 'follow a running run (progress on stderr) until it ends, then print its report' }),
  log: logFlag,
  db: dbFlag,
  ...remoteFlags,
};

function fromStore(dbPath: string, id: string): ReportModel {
  if (!existsSync(dbPath))
    throw new CniBenchError(
      ErrorCodes.NOT_FOUND,
      `run '${id}' not found: no store at ${dbPath} (--db FILE, or --collector URL)`,
      {
        details: { id, dbPath },
      },
    );
  const store = new Store(dbPath);
  try {
    const run = store.getRun(id);
    if (!run)
      throw new CniBenchError(ErrorCodes.NOT_FOUND, `run '${id}' not found in ${dbPath}`, { details: { id, dbPath } });
    return buildReport(run, store.phases(id), store.results(id), store.samples(id));
  } finally {
    store.close();
  }
}

async function report(v: FlagValues<typeof flags>, positionals: readonly string[], ctx: CliContext): Promise<number> {
  if (positionals.length !== 1)
    throw new CniBenchError(ErrorCodes.VALIDATION, `RUN: give exactly one run id, got ${positionals.length}`, {
      details: { field: 'RUN' },
    });
  const id = checkRunId(positionals[0]);
  if (!wantsRemote(v)) {
    ctx.stdout(renderReport(fromStore(v.db, id), v.format).body);
    return 0;
  }
  ctx.stdout(await withCollector(v, (client) => remoteReport(client, id, v)));
  return 0;
}

async function remoteReport(client: CollectorClient, id: string, v: FlagValues<typeof flags>): Promise<string> {
  let last: RunView = await getRun(client, id);
  if (v.wait && !TERMINAL.has(last.state)) {
    const follower = followProgress(() => last, { style: v.log });
    try {
      while (!TERMINAL.has(last.state)) {
        await new Promise((r) => setTimeout(r, 1000));
        last = await getRun(client, id).catch(() => last);
      }
    } finally {
      await follower.stop();
    }
  }
  return renderReport(await fetchReport(client, id), v.format).body;
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench report',
    summary:
      "Prints a run's report: Markdown, JSON, a self-contained HTML page with charts, or CSV; from a collector (--collector) or the local store of lab runs (--db).",
    flags,
    positionals: 'RUN',
    examples: [
      'cni-bench report r1a2b3c --collector http://127.0.0.1:8080 --token-file ./token --format html > run.html',
      'cni-bench report r1a2b3c --format csv > run.csv',
      'cni-bench report r1a2b3c --collector http://127.0.0.1:8080 --wait',
    ],
    notes: ['Exit codes: 0 printed, 1 the run or collector not found, 2 bad flags or run id.', ...REMOTE_NOTES],
  },
  run: (values, positionals, ctx) => report(values, positionals, ctx),
});
