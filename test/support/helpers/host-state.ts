/**
 * Snapshots of what a lab could leave behind on the machine: network namespaces,
 * root-namespace links and iptables rules, lab state files, processes. Tests
 * compare them before and after a lab run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { DIST } from './procs.js';

/** Lab namespaces on the machine; with `labId`, only that lab's (another lab may be running beside it). */
export function labNamespaces(labId?: string): string[] {
  return execFileSync('ip', ['netns', 'list'])
    .toString()
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((n) => n.startsWith(labId ? `cnib-${labId}-` : 'cnib-'));
}

export function rootLinks(): string {
  return execFileSync('ip', ['-o', 'link', 'show'])
    .toString()
    .split('\n')
    .map((l) => l.split(':')[1]?.trim() ?? '')
    .filter(Boolean)
    .sort()
    .join(',');
}

/**
 * Root-namespace links present now that were not in `before` (a rootLinks()
 * snapshot): what a lab run left. A link that went away meanwhile was another
 * lab's, which may run beside it, and is no leak.
 */
export function addedRootLinks(before: string): string[] {
  const had = new Set(before.split(','));
  return rootLinks()
    .split(',')
    .filter((l) => l && !had.has(l));
}

/** Root namespace iptables rules of both backends (counters stripped) and the nftables ruleset. */
export function rootRules(): string {
  const out: string[] = [];
  const read = (file: string, args: string[]): string => {
    try {
      return execFileSync(file, args, { stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .replace(/^#.*$/gm, '')
        .replace(/\[\d+:\d+\]/g, '');
    } catch {
      return `${file} ${args.join(' ')}: unreadable`;
    }
  };
  for (const table of ['nat', 'filter']) {
    out.push(read('iptables-nft-save', ['-t', table]), read('iptables-legacy-save', ['-t', table]));
  }
  out.push(read('nft', ['list', 'ruleset']));
  return out.join('\n');
}

export function labProcesses(): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'])
    .toString()
    .split('\n')
    .filter((l) =>
      /agent\/main\.js|builtins\/(?:http-echo|tcp-echo|tcp-rr|http-open-loop)\.js|\biperf3 -[cs]\b|\bwrk -t/.test(l),
    );
}

/** Live-lab state files; with `labId`, only that lab's. */
export function labStateFiles(dir = process.env.CNI_BENCH_RUN_DIR ?? '/run/cni-bench', labId?: string): string[] {
  const files = existsSync(`${dir}/labs`) ? readdirSync(`${dir}/labs`) : [];
  return labId ? files.filter((f) => f === `${labId}.json`) : files;
}

/**
 * What one lab left behind: its namespaces and state file, and lab processes of this checkout (agents and
 * built-in servers; with `anyLoadGenerator`, also every iperf3 and wrk on the machine, which name no lab).
 * Another checkout's lab may be running beside it, so a test that knows its lab's id asserts only on its own.
 */
export function ownLabLeftovers(
  labId: string,
  o: { anyLoadGenerator?: boolean } = {},
): { namespaces: string[]; processes: string[]; stateFiles: string[] } {
  return {
    namespaces: labNamespaces(labId),
    processes: labProcesses().filter((l) => l.includes(DIST) || (o.anyLoadGenerator === true && !l.includes('.js'))),
    stateFiles: labStateFiles(undefined, labId),
  };
}

/** ownLabLeftovers when nothing is left. */
export const NO_LEFTOVERS = { namespaces: [], processes: [], stateFiles: [] } as const;
