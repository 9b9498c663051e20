/**
 * The built-in fixed-rate HTTP client (agent/builtins/http-open-loop.ts),
 * which times each request from its intended start. 'auto' never picks it:
 * its latency means something else than fortio's, so a scenario names it.
 */
import { toolFacts } from './tool-facts.js';

export const httpOpenLoop = toolFacts({
  name: 'http-open-loop',
  builtIn: true,
  client: { kind: 'http', autoRank: null, crr: false, fixedRate: true, maxRate: false, throughService: true },
});
