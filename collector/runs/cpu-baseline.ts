/**
 * The idle baseline of CPU per unit of work (report/cpu-cost.ts): before the
 * first phase, while no server or client of the run is running yet, a
 * servers-only sample of every node of the run, a pause, and another. What the
 * nodes spent per second then (the machine's background, the agents' own
 * ticking) is subtracted from every round's window.
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { sleep } from '../../core/sleep.js';
import { type JobSender, type RunContext, runAgents } from './run-context.js';

const SAMPLE_TIMEOUT_MS = 5_000;

/** Sample ids per agent: the baseline window's two ends. */
export type CpuBaseline = Record<string, { before: string; after: string }>;

export async function takeCpuBaseline(sender: JobSender, ctx: RunContext, seconds: number): Promise<CpuBaseline> {
  const agents = runAgents(ctx.plan);
  const at = async () => {
    const taken = agents.map((a) => ({ id: a.id, ...sender.sampleOnce(ctx, a, SAMPLE_TIMEOUT_MS, true) }));
    const got = await Promise.all(taken.map((t) => t.sample));
    const lost = taken.filter((_, i) => !got[i]);
    if (lost.length)
      throw new CniBenchError(ErrorCodes.TIMEOUT, `no CPU baseline sample from ${lost.map((t) => t.id).join(', ')}`);
    return taken;
  };
  const before = await at();
  await sleep(seconds * 1000, ctx.signal);
  const after = await at();
  return Object.fromEntries(
    before.map((b, i) => [b.id, { before: b.jobId, after: (after[i] as (typeof after)[number]).jobId }]),
  );
}
