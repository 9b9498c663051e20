/**
 * Which drivers exist, by tool name. Adding a tool means its catalogue entry
 * (core/tool-catalogue/), its driver file and one line here;
 * test/unit/core/tool-catalogue.test.ts fails while the two lists disagree.
 */
import type { ClientDriver, ServerDriver } from './driver.js';
import { fortio } from './fortio.js';
import { fortioTcp } from './fortio-tcp.js';
import { httpEcho } from './http-echo.js';
import { httpOpenLoop } from './http-open-loop.js';
import { iperf3 } from './iperf3.js';
import { netperf } from './netperf.js';
import { netserver } from './netserver.js';
import { sockperf } from './sockperf.js';
import { tcpEcho } from './tcp-echo.js';
import { tcpRr } from './tcp-rr.js';
import { wrk } from './wrk.js';

const drivers: readonly (ClientDriver | ServerDriver | (ClientDriver & ServerDriver))[] = [
  iperf3,
  wrk,
  sockperf,
  fortio,
  netperf,
  netserver,
  fortioTcp,
  httpEcho,
  httpOpenLoop,
  tcpRr,
  tcpEcho,
];

const isClient = (d: ClientDriver | ServerDriver): d is ClientDriver => 'buildClientArgs' in d;
const isServer = (d: ClientDriver | ServerDriver): d is ServerDriver => 'buildServerArgs' in d;

export const clientDrivers: ReadonlyMap<string, ClientDriver> = new Map(
  drivers.filter(isClient).map((d) => [d.tool, d]),
);
export const serverDrivers: ReadonlyMap<string, ServerDriver> = new Map(
  drivers.filter(isServer).map((d) => [d.tool, d]),
);
