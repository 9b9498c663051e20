/** iperf3: TCP and UDP throughput, client and its own server. */
import { toolFacts } from './tool-facts.js';

export const iperf3 = toolFacts({
  name: 'iperf3',
  builtIn: false,
  binary: {
    binary: 'iperf3',
    source: { debian: 'iperf3' },
    probe: { args: ['--version'], pattern: /^iperf (\d+\.\d+(?:\.\d+)?)/m },
    required: true,
    why: 'TCP and UDP throughput, client and server; nothing built in replaces it',
    announced: true,
  },
  client: {
    kind: 'throughput',
    serverTool: 'iperf3',
    autoRank: 1,
    crr: false,
    fixedRate: false,
    maxRate: true,
    throughService: true,
  },
  server: { serves: 'throughput', port: 5201, servicePort: 5201, singleThreaded: true },
});
