/**
 * The agent's public entry: what the lab, the CLI and the benchmarks may know
 * of the agent without reaching into its internals. Above all how to start
 * one (its main and its Node flags); then the few pieces a benchmark or
 * `doctor` runs in this process. Everything else in agent/ is private to it
 * (test/unit/boundaries.test.ts holds every other folder to that).
 */
import { fileURLToPath } from 'node:url';

export { wrk } from './drivers/wrk.js';
export { AGENT_NODE_FLAGS } from './node-flags.js';
// Hubble's observer and the agent's feature status: the lab's Hubble condition asks them too (never loaded by the agent's main unless a collector asks).
export { type CiliumFeatures, parseCiliumFeatures, readCiliumFeatures } from './observe/cilium-features.js';
export {
  type HubbleFlow,
  type HubbleServerStatus,
  hubbleFlowsTo,
  hubbleServerStatus,
  hubbleSocket,
  verdictName,
} from './observe/hubble-observer.js';
export { DataplaneSampler } from './samplers/dataplane-sampler.js';
export { parseProcStat } from './samplers/proc.js';
export { checkRequirements, type RequirementCheck } from './tools/preflight.js';

/** The agent's entry script; run it with `process.execPath` and AGENT_NODE_FLAGS. */
export const AGENT_MAIN = fileURLToPath(new URL('./main.js', import.meta.url));

/** The built-in HTTP echo server's script (agent/builtins/http-echo.ts), run with `process.execPath`. */
export const HTTP_ECHO_MAIN = fileURLToPath(new URL('./builtins/http-echo.js', import.meta.url));
export { clientDrivers, serverDrivers } from './drivers/registry.js';
