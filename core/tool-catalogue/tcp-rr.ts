/**
 * The built-in TCP_RR/TCP_CRR client (agent/builtins/tcp-rr.ts) against the
 * built-in tcp-echo: the fallback on nodes without a native tool, and TCP_CRR
 * over many connections or through a Service, which netperf cannot do.
 */
import { toolFacts } from './tool-facts.js';

export const tcpRr = toolFacts({
  name: 'tcp-rr',
  builtIn: true,
  client: {
    kind: 'rr',
    serverTool: 'tcp-echo',
    autoRank: 9,
    crr: true,
    fixedRate: false,
    maxRate: true,
    throughService: true,
  },
});
