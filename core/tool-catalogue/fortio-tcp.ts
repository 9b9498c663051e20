/**
 * fortio's TCP mode: TCP_RR over kept connections against `fortio tcp-echo`.
 * It never opens a connection per transaction, so no TCP_CRR.
 */
import { fortioBinary } from './fortio.js';
import { toolFacts } from './tool-facts.js';

export const fortioTcp = toolFacts({
  name: 'fortio-tcp',
  builtIn: false,
  binary: fortioBinary,
  client: {
    kind: 'rr',
    serverTool: 'fortio-tcp',
    autoRank: 3,
    crr: false,
    fixedRate: false,
    maxRate: true,
    throughService: true,
  },
  server: { serves: 'rr', port: 8078, servicePort: 8078, singleThreaded: false },
});
