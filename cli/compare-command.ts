/**
 * `cni-bench compare RUN|FILE RUN|FILE... [--format md|json|csv] [--label a,b]
 * [--noise-floor 0.03] [--db FILE]`: two or more runs side by side with a
 * verdict per measurement, so a comparison between clusters is never again
 * merged by hand. A run is a run id in the store or a report file as
 * `cni-bench lab --json` prints it; the first is the baseline.
 */
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { Store } from '../collector/index.js';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { customFlag, type FlagValues, oneOfFlag, parseFlags } from '../core/flags.js';
import { parseWith } from '../core/validate.js';
import {
  COMPARISON_FORMATS,
  type ComparisonTable,
  compareReports,
  DEFAULT_NOISE_FLOOR,
  parseComparisonFormat,
  parseLabels,
  parseNoiseFloor,
} from '../report/compare.js';
import { renderComparison } from '../report/compare-render.js';
import { buildReport, type ReportModel } from '../report/report.js';
import { defineCommand } from './command.js';
import { dbFlag } from './common-flags.js';
import type { CollectorClient } from './remote/client.js';
import { REMOTE_NOTES, remoteFlags, wantsRemote, withCollector } from './remote/connect.js';
import { checkRunId, fetchReport } from './remote/runs.js';

/** What compare reads of a report file; everything else passes through untouched. */
const reportFileSchema = z.looseObject({
  run: z.looseObject({ id: z.string(), name: z.string(), state: z.string() }),
  cluster: z.looseObject({}).optional(),
  rows: z.array(
    z.looseObject({
      id: z.string(),
      measurement: z.string(),
      status: z.string(),
      warnings: z.array(z.looseObject({ code: z.string(), message: z.string() })),
      metrics: z.array(
        z.looseObject({
          name: z.string(),
          unit: z.string(),
          higherIsBetter: z.boolean(),
          value: z.number(),
          perRound: z.array(z.number()),
          summary: z.looseObject({}).nullable(),
        }),
      ),
    }),
  ),
});

function invalid(field: string, message: string): CniBenchError {
  return new CniBenchError(ErrorCodes.VALIDATION, `${field}: ${message}`, { details: { field } });
}

async function readReportFile(path: string): Promise<ReportModel> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw invalid(path, `not a JSON report (${(err as Error).message})`);
  }
  if (json && typeof json === 'object' && Array.isArray((json as { runs?: unknown }).runs) && !('rows' in json)) {
    throw invalid(
      path,
      'holds several runs (cni-bench lab sweep --json); save each report on its own, or compare the runs by id',
    );
  }
  return parseWith(reportFileSchema, json, `report file '${path}'`) as unknown as ReportModel;
}

/**
 * Resolves each argument to a report; the store is opened only if an argument
 * is a run id, and closed again. With a collector, run ids are its runs.
 */
async function loadReports(args: string[], dbPath: string, collector?: CollectorClient): Promise<ReportModel[]> {
  let store: Store | undefined;
  try {
    const out: ReportModel[] = [];
    for (const arg of args) {
      if (existsSync(arg) && statSync(arg).isFile()) {
        out.push(await readReportFile(arg));
        continue;
      }
      if (collector) {
        out.push(await fetchReport(collector, checkRunId(arg, arg)));
        continue;
      }
      if (!/^[\w-]+$/.test(arg))
        throw new CniBenchError(ErrorCodes.NOT_FOUND, `'${arg}': no such report file, and not a run id`, {
          details: { argument: arg },
        });
      if (!store) {
        if (!existsSync(dbPath))
          throw new CniBenchError(ErrorCodes.NOT_FOUND, `run '${arg}' not found: no store at ${dbPath} (--db FILE)`, {
            details: { id: arg, dbPath },
          });
        store = new Store(dbPath);
      }
      const run = store.getRun(arg);
      if (!run)
        throw new CniBenchError(ErrorCodes.NOT_FOUND, `run '${arg}' not found in ${dbPath}`, {
          details: { id: arg, dbPath },
        });
      out.push(buildReport(run, store.phases(arg), store.results(arg), store.samples(arg)));
    }
    return out;
  } finally {
    store?.close();
  }
}

const flags = {
  format: customFlag({
    help: 'output format',
    value: COMPARISON_FORMATS.join('|'),
    default: 'md' as const,
    parse: (t, n) => parseComparisonFormat(n, t),
  }),
  label: customFlag({
    help: 'column labels, one per run (default: what each run measured)',
    value: 'A,B,...',
    default: undefined as string[] | undefined,
    parse: (t, n) => parseLabels(n, t),
  }),
  'noise-floor': customFlag({
    help: 'relative difference below which nothing counts as a change',
    value: 'X',
    default: undefined as number | undefined,
    defaultText: String(DEFAULT_NOISE_FLOOR),
    parse: (t, n) => parseNoiseFloor(n, t),
  }),
  'fail-on': oneOfFlag<'never' | 'worse'>(['never', 'worse'], {
    help: 'exit 3 when any measurement of any run is significantly worse than the baseline (a CI gate for a dataplane upgrade)',
    default: 'never',
  }),
  db: dbFlag,
  ...remoteFlags,
};

/** The rows where a run is significantly worse than the baseline (verdict 'worse': significant and above the noise floor). */
export function worseRows(t: ComparisonTable): string[] {
  return t.rows.flatMap((r) =>
    r.cells.flatMap((c, i) => (c.vsBaseline?.verdict === 'worse' ? [`${r.label}: ${t.runs[i]?.label ?? i}`] : [])),
  );
}

async function compare(
  values: FlagValues<typeof flags>,
  positionals: readonly string[],
  stdout: (s: string) => void,
): Promise<number> {
  const { format, label: labels, 'noise-floor': noiseFloor } = values;
  if (positionals.length < 2)
    throw invalid('runs', `need at least 2 run ids or report files, got ${positionals.length}`);
  if (labels && labels.length !== positionals.length)
    throw invalid('--label', `${labels.length} label(s) for ${positionals.length} runs; give one per run`);
  const reports = wantsRemote(values)
    ? await withCollector(values, (c) => loadReports([...positionals], values.db, c))
    : await loadReports([...positionals], values.db);
  const table = compareReports(reports, {
    ...(labels ? { labels } : {}),
    ...(noiseFloor !== undefined ? { noiseFloor } : {}),
  });
  stdout(renderComparison(table, format).body);
  const worse = values['fail-on'] === 'worse' ? worseRows(table) : [];
  if (worse.length) {
    process.stderr.write(
      `cni-bench compare: ${worse.length} measurement(s) significantly worse than ${table.baseline}:\n${worse.map((w) => `  ${w}\n`).join('')}`,
    );
    return 3;
  }
  return 0;
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench compare',
    summary:
      'Sets two or more runs side by side with a verdict per measurement (better, worse, within noise) from a significance test over their rounds; the first run is the baseline. A run is a run id in the store or a report file as `cni-bench lab --json` writes it.',
    flags,
    positionals: 'RUN|REPORT.json RUN|REPORT.json...',
    examples: [
      'cni-bench compare iptables.json nftables.json',
      'cni-bench compare r-1a2b r-3c4d --format csv --label before,after',
      'cni-bench compare before.json r-3c4d --collector http://127.0.0.1:8080 --token-file ./token --fail-on worse',
      'cni-bench compare iptables.json nftables.json --format html > comparison.html',
    ],
    notes: [
      'With --collector, or --release/--context (the in-cluster collector found through the kubeconfig), a run id names a run of that collector; report files are read as before.',
      'Exit codes: 0 compared, 1 a run or file not found, 2 bad flags or arguments, 3 --fail-on worse and a measurement is significantly worse.',
      ...REMOTE_NOTES,
    ],
  },
  run: (values, positionals, ctx) => compare(values, positionals, ctx.stdout),
});

/** Writes the comparison to io.stdout; returns the exit code (0). Bad input throws E_VALIDATION, an unknown run E_NOT_FOUND. */
export async function compareCommand(
  args: string[],
  io: { stdout: (s: string) => void; dbPath: string },
): Promise<number> {
  const parsed = parseFlags(command.spec, args, { CNI_BENCH_DB: io.dbPath });
  return compare(parsed.values, parsed.positionals, io.stdout);
}
