/**
 * Snapshots of what a lab could leave behind on the machine: network namespaces,
 * root-namespace links and iptables rules, lab state files, processes. Tests
 * compare them before and after a lab run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

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
