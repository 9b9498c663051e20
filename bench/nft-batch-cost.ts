/**
 * Where nftables programming time goes, measured, printed, never asserted:
 * kube-proxy's nftables layout written in batches of 1,000 Services into one
 * fresh network namespace, once with E endpoints per Service (an anonymous
 * `numgen random mod E map` per Service, as kube-proxy writes it) and once
 * with one endpoint (a plain dnat, no anonymous map). Each batch's user and
 * system CPU of the `nft -f` it runs is printed beside the Services already
 * there, so a cost that grows with the table shows as a rising column.
 *
 *   npm run bench:nft-batch-cost -- [--batches 10] [--endpoints 4]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runInNetns } from '../core/netns.js';
import { run } from '../core/process.js';
import { dummyRange, renderNftBase, renderNftServicesAdd } from '../lab/index.js';
import { writeFindings } from './findings.js';

const { values } = parseArgs({
  options: { batches: { type: 'string', default: '10' }, endpoints: { type: 'string', default: '4' } },
});
const batches = Number(values.batches);
const endpoints = Number(values.endpoints);
const BATCH = 1000;
const NS = `cnibbench-nft-${process.pid}`;

/** User and system CPU seconds of waited-for children: /proc/self/stat cutime, cstime (clock ticks, 100 a second). */
function childCpu(): { user: number; system: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[13]) / 100, system: Number(f[14]) / 100 };
}

async function series(eps: number): Promise<{ user: number; system: number; wallMs: number }[]> {
  await run('ip', ['netns', 'add', NS], { tool: 'ip' });
  try {
    const nft = (text: string) => runInNetns({ name: NS }, 'load', 'nft', ['-f', '-'], { input: text });
    await nft(renderNftBase({ serviceCidr: '198.19.0.0/16', nodeIp: '198.18.0.1' }));
    const out: { user: number; system: number; wallMs: number }[] = [];
    for (let b = 0; b < batches; b++) {
      const text = renderNftServicesAdd(dummyRange(b * BATCH, (b + 1) * BATCH, eps));
      const before = childCpu();
      const r = await nft(text);
      const after = childCpu();
      out.push({ user: after.user - before.user, system: after.system - before.system, wallMs: r.durationMs });
    }
    return out;
  } finally {
    await run('ip', ['netns', 'del', NS], { tool: 'ip' });
  }
}

const withMaps = await series(endpoints);
const plain = await series(1);
const cell = (c: { user: number; system: number; wallMs: number }) =>
  `${(c.wallMs / 1000).toFixed(2)} s (${c.user.toFixed(2)} user, ${c.system.toFixed(2)} system)`;
const text = [
  `nft batch cost on this machine (${new Date().toISOString()}): ${BATCH} Services per nft -f, kube-proxy's nftables layout`,
  `| Services already there | ${endpoints} endpoints (anonymous numgen map each) | 1 endpoint (plain dnat) |`,
  '|---:|---:|---:|',
  ...withMaps.map((c, i) => `| ${(i * BATCH).toLocaleString('en-US')} | ${cell(c)} | ${cell(plain[i] as typeof c)} |`),
  '',
].join('\n');
process.stdout.write(text);
await writeFindings({ bench: 'nft-batch-cost', title: "nftables batch cost of kube-proxy's layout", body: text });
