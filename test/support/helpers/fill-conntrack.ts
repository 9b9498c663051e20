/**
 * Fills a lab namespace's conntrack table on purpose, for the suites that
 * provoke a full table: conntrack-fill.ts run inside namespace `ns`, its
 * unreplied UDP flows to the lab address `target` (they expire after 30 s).
 */
import { execFileSync } from 'node:child_process';
import { DIST } from './procs.js';

/** Sends `count` flows and returns once they are sent. */
export function fillConntrack(ns: string, target: string, count: number): void {
  execFileSync('ip', [
    'netns',
    'exec',
    ns,
    process.execPath,
    `${DIST}test/support/helpers/conntrack-fill.js`,
    '--target',
    target,
    '--count',
    String(count),
  ]);
}
