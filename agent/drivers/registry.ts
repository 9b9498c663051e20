/**
 * Which drivers exist. Adding a tool means adding its driver file and one line
 * here; nothing else in the agent names a tool.
 */
import type { ClientDriver, ServerDriver } from './driver.js';
import { fortio, fortioTcp } from './fortio.js';
import { httpEcho } from './http-echo.js';
import { httpOpenLoop } from './http-open-loop.js';
import { iperf3 } from './iperf3.js';
import { netperf, netserver } from './netperf.js';
import { sockperf } from './sockperf.js';
import { tcpEcho, tcpRr } from './tcp-rr.js';
import { wrk } from './wrk.js';

export const clientDrivers: ReadonlyMap<string, ClientDriver> = new Map([iperf3, wrk, fortio, fortioTcp, sockperf, netperf, tcpRr, httpOpenLoop].map((d) => [d.tool, d]));
export const serverDrivers: ReadonlyMap<string, ServerDriver> = new Map([iperf3, httpEcho, fortio, fortioTcp, sockperf, netserver, tcpEcho].map((d) => [d.tool, d]));
