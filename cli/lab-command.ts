/**
 * `cni-bench lab`: creates a lab, starts a collector in this process (root
 * namespace) and agents in the lab's pods, runs a scenario, prints the report,
 * and tears everything down: on success, on failure, and on SIGINT/SIGTERM.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCollector, type Collector } from '../collector/collector.js';
import { collectorConfig } from '../collector/config.js';
import { renderMarkdown } from '../collector/report/markdown.js';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { Lab } from '../lab/lab.js';

export interface LabCommandOptions {
  nodes: number;
  durationSeconds: number;
  warmupSeconds: number;
  scenarioFile?: string;
  json: boolean;
  dbPath: string;
  agentWaitMs: number;
}

/** Lab defaults: the study's measurements with short durations, so a lab run takes about a minute. */
export const LAB_DEFAULTS = { nodes: 3, durationSeconds: 5, warmupSeconds: 2 } as const;

async function waitForAgents(c: Collector, n: number, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (c.registry.available().length < n) {
    if (signal.aborted) throw new CniBenchError(ErrorCodes.CANCELLED, 'interrupted while waiting for agents');
    if (Date.now() > deadline) {
      throw new CniBenchError(ErrorCodes.NO_AGENTS, `only ${c.registry.available().length} of ${n} lab agents connected within ${timeoutMs} ms`);
    }
    await sleep(100);
  }
}

async function loadScenario(opts: LabCommandOptions): Promise<unknown> {
  const base: Record<string, unknown> = opts.scenarioFile ? (JSON.parse(await readFile(opts.scenarioFile, 'utf8')) as Record<string, unknown>) : { name: 'lab default' };
  return { durationSeconds: opts.durationSeconds, warmupSeconds: opts.warmupSeconds, ...base };
}

/** Returns the process exit code: 0 succeeded, 1 run failed, 130/143 interrupted. */
export async function labCommand(opts: LabCommandOptions, log: Logger): Promise<number> {
  const abort = new AbortController();
  let signalName: NodeJS.Signals | undefined;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (signalName) return;
    signalName = sig;
    log.warn('interrupted: cleaning up', { signal: sig });
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let lab: Lab | undefined;
  let collector: Collector | undefined;
  try {
    const scenario = await loadScenario(opts);
    lab = await Lab.create({ nodes: opts.nodes, log });
    if (abort.signal.aborted) return exitFor(signalName);
    collector = await startCollector(
      collectorConfig({ grpcListen: `unix:${lab.controlSocket}`, httpHost: '127.0.0.1', httpPort: 0, dbPath: opts.dbPath, heartbeatIntervalMs: 1000, livenessTimeoutMs: 8000 }),
      log,
      lab.services,
    );
    lab.startAgents(collector.grpcAddress);
    await waitForAgents(collector, opts.nodes, opts.agentWaitMs, abort.signal);
    const run = collector.api.create(scenario);
    log.info('run started', { runId: run.id, rest: collector.httpUrl });
    const c = collector;
    await Promise.race([c.orchestrator.wait(run.id), new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true }))]);
    if (abort.signal.aborted) await c.orchestrator.cancel(run.id);
    const model = c.api.reportModel(run.id);
    process.stdout.write(opts.json ? `${JSON.stringify(model, null, 2)}\n` : renderMarkdown(model));
    if (signalName) return exitFor(signalName);
    return model.run.state === 'succeeded' ? 0 : 1;
  } catch (err) {
    if (signalName) return exitFor(signalName);
    throw err;
  } finally {
    await collector?.close().catch((err: unknown) => log.error('collector close failed', { error: (err as Error).message }));
    await lab?.destroy().catch((err: unknown) => log.error('lab teardown failed', { error: (err as Error).message }));
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function exitFor(sig: NodeJS.Signals | undefined): number {
  return sig === 'SIGTERM' ? 143 : 130;
}
