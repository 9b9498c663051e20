/**
 * Which drivers exist. Adding a tool means adding its driver file and one line
 * here; nothing else in the agent names a tool.
 */
import type { ClientDriver, ServerDriver } from './driver.js';
import { httpEcho } from './http-echo.js';
import { iperf3 } from './iperf3.js';
import { wrk } from './wrk.js';

export const clientDrivers: ReadonlyMap<string, ClientDriver> = new Map([iperf3, wrk].map((d) => [d.tool, d]));
export const serverDrivers: ReadonlyMap<string, ServerDriver> = new Map([iperf3, httpEcho].map((d) => [d.tool, d]));
