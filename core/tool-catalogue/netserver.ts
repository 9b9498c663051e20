/**
 * netserver: netperf's server. Clients connect to its control port and open a
 * data connection to the second port it is told (fixed, so firewalls and
 * NetworkPolicies can allow it). It forks one single-threaded child per test.
 */
import { NETPERF_PROBE } from './netperf.js';
import { toolFacts } from './tool-facts.js';

export const netserver = toolFacts({
  name: 'netserver',
  builtIn: false,
  binary: {
    binary: 'netserver',
    source: { build: 'scripts/install-netperf.sh', dockerStage: 'netperf' },
    // netserver answers -V with netperf's own line; the plan needs it by name on the server's node.
    probe: NETPERF_PROBE,
    required: false,
    why: 'the netperf server',
    announced: true,
  },
  server: { serves: 'rr', port: 12865, servicePort: 12865, dataPort: 12866, singleThreaded: true },
});
