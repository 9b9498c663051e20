/**
 * fortio's HTTP mode: fixed-rate and maximum-rate HTTP load, and the HTTP
 * server. Not packaged by Debian: scripts/build-go-tools.sh builds it on a dev
 * machine, the Dockerfile's fortio stage for the image. Its TCP mode is the
 * separate tool fortio-tcp on the same binary.
 */
import { type BinaryFacts, toolFacts } from './tool-facts.js';

export const fortioBinary: BinaryFacts = Object.freeze({
  binary: 'fortio',
  source: { build: 'scripts/build-go-tools.sh', dockerStage: 'fortio' },
  probe: { args: ['version'], pattern: /^(\d+\.\d+\.\d+)/m },
  required: true,
  why: 'fixed-rate HTTP latency as the study measured it; also the HTTP server, and TCP_RR where sockperf is missing',
  announced: true,
});

export const fortio = toolFacts({
  name: 'fortio',
  builtIn: false,
  binary: fortioBinary,
  client: { kind: 'http', autoRank: 2, crr: false, fixedRate: true, maxRate: true, throughService: true },
  // fortio's server uses every core.
  server: { serves: 'http', port: 8081, servicePort: 80, singleThreaded: false },
});
