/** wrk: HTTP at maximum rate (no fixed rate: that is fortio's or the built-in open loop's). */
import { toolFacts } from './tool-facts.js';

export const wrk = toolFacts({
  name: 'wrk',
  builtIn: false,
  binary: {
    binary: 'wrk',
    source: { debian: 'wrk' },
    probe: { args: ['-v'], pattern: /^wrk (?:debian\/)?(\d+\.\d+\.\d+)/m },
    required: false,
    why: 'maximum-rate HTTP (fortio stands in)',
    announced: true,
  },
  client: { kind: 'http', autoRank: 1, crr: false, fixedRate: false, maxRate: true, throughService: true },
});
