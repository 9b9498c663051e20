/**
 * Flags several lab commands share, declared once with their help text.
 * Numbers that differ per command (default node count) are given by the command.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { customFlag, numberFlag, oneOfFlag, stringFlag, switchFlag } from '../core/flags.js';
import type { IptablesBackend } from '../lab/index.js';
import { parseReportFormat, REPORT_FORMATS, type ReportFormat } from '../report/report-formats.js';

/** Where lab runs are stored when neither --db nor CNI_BENCH_DB says otherwise. */
export const DEFAULT_DB = join(homedir(), '.local', 'state', 'cni-bench', 'lab.db');

export const dbFlag = stringFlag({
  help: 'SQLite store of runs',
  value: 'FILE',
  default: DEFAULT_DB,
  defaultText: '~/.local/state/cni-bench/lab.db',
  env: 'CNI_BENCH_DB',
});
export const jsonFlag = switchFlag({ help: 'print the report model as JSON instead of Markdown' });
export const nodesFlag = (fallback: number) =>
  numberFlag({ help: 'lab nodes (network namespaces)', default: fallback, min: 2, integer: true });
export const agentWaitFlag = numberFlag({
  help: 'seconds to wait for every lab agent to connect',
  value: 'S',
  default: 30,
  min: 1,
});
export const shareCpusFlag = switchFlag({
  help: 'let every lab node use every CPU (default: each node its own share when there are at least as many CPUs as nodes)',
});
export const iptablesBackendFlag = oneOfFlag<IptablesBackend>(['legacy', 'nft'], {
  help: "iptables backend of kube-proxy's iptables mode",
  default: 'legacy',
});
export const warmupFlag = (fallback: number) =>
  numberFlag({
    help: 'seconds of warm-up before each measurement (not reported)',
    value: 'S',
    default: fallback,
    min: 0,
  });
export const durationFlag = (fallback: number) =>
  numberFlag({ help: 'seconds per measured round', value: 'S', default: fallback, min: 0.1 });

/** A run's report format: Markdown, the JSON model, a self-contained HTML page with charts, or CSV. */
export const formatFlag = customFlag({
  help: 'report format: Markdown, the JSON model, a self-contained HTML page with charts, or CSV',
  value: REPORT_FORMATS.join('|'),
  default: 'md' as ReportFormat,
  parse: (t, n) => parseReportFormat(n, t),
});
