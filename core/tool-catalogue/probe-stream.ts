/**
 * The built-in open-loop probe stream (agent/builtins/probe-stream.ts) against
 * the built-in tcp-echo: new and kept connections at a fixed rate in 100 ms
 * bins, what a disruption phase measures while its event happens. No native
 * tool sends on a fixed schedule over both kinds and bins by intended start.
 */
import { toolFacts } from './tool-facts.js';

export const probeStream = toolFacts({
  name: 'probe-stream',
  builtIn: true,
  client: {
    kind: 'disruption',
    serverTool: 'tcp-echo',
    autoRank: 1,
    crr: true,
    fixedRate: true,
    maxRate: false,
    throughService: true,
  },
});
