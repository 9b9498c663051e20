/**
 * netperf: the reference study's TCP_RR and TCP_CRR client, one connection at
 * a time, against netserver. Its data connection goes to a second port
 * (control + 1), which a run's Service fronts as a second named port
 * (collector/runs/measure-phase.ts), so it runs through a Service too. Debian's
 * non-free package (scripts/install-netperf.sh, which scripts/setup.sh runs; the
 * Dockerfile's netperf stage); scripts/build-netperf.sh builds it from source instead.
 */
import { toolFacts } from './tool-facts.js';

export const NETPERF_PROBE = Object.freeze({ args: ['-V'], pattern: /Netperf version (\d+\.\d+\.\d+)/ });

export const netperf = toolFacts({
  name: 'netperf',
  builtIn: false,
  binary: {
    binary: 'netperf',
    source: { build: 'scripts/install-netperf.sh', dockerStage: 'netperf' },
    probe: NETPERF_PROBE,
    required: false,
    why: 'TCP_RR and TCP_CRR as the reference study measured them (else sockperf, and the built-in tcp-rr for TCP_CRR)',
    announced: true,
  },
  client: {
    kind: 'rr',
    serverTool: 'netserver',
    autoRank: 1,
    crr: true,
    fixedRate: false,
    maxRate: true,
    maxConnections: 1,
    throughService: true,
  },
});
