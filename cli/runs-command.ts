/** `cni-bench runs`: the collector's runs, newest first, as a table or JSON. */
import { type FlagValues, numberFlag, oneOfFlag } from '../core/flags.js';
import { mdText } from '../report/escape.js';
import { type CliContext, defineCommand } from './command.js';
import { REMOTE_NOTES, remoteFlags, withCollector } from './remote/connect.js';
import type { RunView } from './remote/runs.js';

const flags = {
  limit: numberFlag({ help: 'most runs listed', default: 20, min: 1, integer: true }),
  format: oneOfFlag<'md' | 'json'>(['md', 'json'], { help: 'a Markdown table or the JSON list', default: 'md' }),
  ...remoteFlags,
};

function seconds(r: RunView): string {
  return r.endedMs && r.startedMs ? `${((r.endedMs - r.startedMs) / 1000).toFixed(0)} s` : '—';
}

async function runs(v: FlagValues<typeof flags>, ctx: CliContext): Promise<number> {
  const { runs } = await withCollector(v, (c) =>
    c.json<{ runs: RunView[] }>('GET', `v1/runs?limit=${Math.min(1000, v.limit)}`),
  );
  if (v.format === 'json') {
    ctx.stdout(`${JSON.stringify(runs, null, 2)}\n`);
    return 0;
  }
  const lines = [
    '| run | name | state | created | took | phases |',
    '|---|---|---|---|---:|---:|',
    ...runs.map(
      (r) =>
        `| ${mdText(r.id)} | ${mdText(r.name ?? (r.scenario as { name?: string })?.name ?? '')} | ${mdText(r.state)}${r.reason ? ` (${mdText(r.reason)})` : ''} | ${new Date(r.createdMs).toISOString()} | ${seconds(r)} | ${r.phases.filter((p) => p.state === 'succeeded').length}/${r.phases.length} |`,
    ),
  ];
  ctx.stdout(`${lines.join('\n')}\n`);
  return 0;
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench runs',
    summary: "Lists a collector's runs, newest first: state, when, how long, phases done.",
    flags,
    examples: [
      'cni-bench runs --namespace cni-bench',
      'cni-bench runs --collector http://127.0.0.1:8080 --token-file ./token',
      'cni-bench runs --format json',
    ],
    notes: ['Exit codes: 0 listed, 1 the collector could not be reached or refused, 2 bad flags.', ...REMOTE_NOTES],
  },
  run: (values, _p, ctx) => runs(values, ctx),
});
