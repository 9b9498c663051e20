/**
 * `cni-bench lab`: runs a scenario (default: the study's measurements with
 * short durations) in a fresh lab, prints the report, and tears everything
 * down: on success, on failure, and on SIGINT/SIGTERM.
 */
import { readFile } from 'node:fs/promises';
import { renderMarkdown } from '../report/markdown.js';
import type { Logger } from '../core/log.js';
import { type LabProxyOptions, runInLab } from '../lab/index.js';
import { exitCodeFor, trapInterrupts } from '../core/interrupts.js';

export interface LabCommandOptions {
  nodes: number;
  durationSeconds: number;
  warmupSeconds: number;
  scenarioFile?: string;
  json: boolean;
  dbPath: string;
  agentWaitMs: number;
  proxy: LabProxyOptions;
  /** Shape node uplinks (tc tbf) to this rate and declare it as the link speed. */
  linkMbit?: number;
  shareCpus?: boolean;
}

/** Lab defaults: the study's whole matrix with short rounds (3 rounds of 2 s), so a lab run takes about four minutes on 2 cores. */
export const LAB_DEFAULTS = { nodes: 3, durationSeconds: 2, warmupSeconds: 1, rounds: 3, roundSleepSeconds: 0.5 } as const;

async function loadScenario(opts: LabCommandOptions): Promise<unknown> {
  const base: Record<string, unknown> = opts.scenarioFile ? (JSON.parse(await readFile(opts.scenarioFile, 'utf8')) as Record<string, unknown>) : { name: 'lab default' };
  return { durationSeconds: opts.durationSeconds, warmupSeconds: opts.warmupSeconds, rounds: LAB_DEFAULTS.rounds, roundSleepSeconds: LAB_DEFAULTS.roundSleepSeconds, ...base };
}

/** Returns the process exit code: 0 succeeded, 1 run failed, 130/143 interrupted. */
export async function labCommand(opts: LabCommandOptions, log: Logger): Promise<number> {
  const interrupts = trapInterrupts(log);
  try {
    const scenario = await loadScenario(opts);
    const model = await runInLab(opts, scenario, log, interrupts.signal);
    if (model) process.stdout.write(opts.json ? `${JSON.stringify(model, null, 2)}\n` : renderMarkdown(model));
    if (interrupts.received()) return exitCodeFor(interrupts.received());
    return model?.run.state === 'succeeded' ? 0 : 1;
  } catch (err) {
    if (interrupts.received()) return exitCodeFor(interrupts.received());
    throw err;
  } finally {
    interrupts.dispose();
  }
}
