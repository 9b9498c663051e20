/**
 * The one mapping from the flags the lab commands share (`lab`, `lab sweep`,
 * `lab study`) to their options: the lab's size and CPU placement, round
 * timing, where runs are stored and how the result prints. Each command adds
 * the options only it has.
 */
import type { LogStyle } from './progress.js';

/** The shared flags' values, as each command's flag schema parses them. */
export interface LabRunFlagValues<F> {
  readonly nodes: number;
  readonly duration: number;
  readonly warmup: number;
  readonly json: boolean;
  readonly format: F;
  readonly log: LogStyle;
  readonly db: string;
  readonly 'agent-wait': number;
  readonly 'share-cpus': boolean;
}

/** The options they give, under the names every lab command's options use. */
export interface LabRunOptions<F> {
  nodes: number;
  durationSeconds: number;
  warmupSeconds: number;
  json: boolean;
  format: F;
  log: LogStyle;
  dbPath: string;
  agentWaitMs: number;
  shareCpus: boolean;
}

/** --agent-wait is given in seconds, the options hold milliseconds. */
export function labRunOptions<F>(v: LabRunFlagValues<F>): LabRunOptions<F> {
  return {
    nodes: v.nodes,
    durationSeconds: v.duration,
    warmupSeconds: v.warmup,
    json: v.json,
    format: v.format,
    log: v.log,
    dbPath: v.db,
    agentWaitMs: v['agent-wait'] * 1000,
    shareCpus: v['share-cpus'],
  };
}
