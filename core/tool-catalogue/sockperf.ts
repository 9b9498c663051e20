/** sockperf: native TCP_RR over one kept connection (no TCP_CRR), client and its own server. */
import { toolFacts } from './tool-facts.js';

export const sockperf = toolFacts({
  name: 'sockperf',
  builtIn: false,
  binary: {
    binary: 'sockperf',
    source: { debian: 'sockperf' },
    probe: { args: ['--version'], pattern: /^sockperf, version (\d+\.\d+)/m },
    required: false,
    why: "TCP_RR latency (fortio's TCP mode, then the built-in tcp-rr, stand in)",
    announced: true,
  },
  client: {
    kind: 'rr',
    serverTool: 'sockperf',
    autoRank: 2,
    crr: false,
    fixedRate: false,
    maxRate: true,
    maxConnections: 1,
    throughService: true,
  },
  server: { serves: 'rr', port: 11111, servicePort: 11111, singleThreaded: true },
});
