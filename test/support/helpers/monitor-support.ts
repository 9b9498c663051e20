/**
 * Test support for the monitoring tests: the real promtool, built from
 * github.com/prometheus/prometheus by scripts/build-control-plane.sh (a test
 * that needs it fails, never skips, when it is missing, and says how to build
 * it), and a dataplane sample made of real captured tool output.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { groupBpfMaps } from '../../../agent/monitor/bpf-maps.js';
import { parseBpftoolMapShow } from '../../../agent/samplers/bpftool.js';
import { parseConntrackCount } from '../../../agent/samplers/conntrack.js';
import { parseIptablesSave } from '../../../agent/samplers/iptables-save.js';
import { parseNftRuleset } from '../../../agent/samplers/nft.js';
import { type BpfMapState, DataplaneSample } from '../../../gen/cnibench/v1/agent.js';
import { fixture } from './fixtures.js';

export const PROMTOOL = join(process.env.CNI_BENCH_TOOLS_DIR ?? '/var/cache/cni-bench/tools', 'bin', 'promtool');

export function requirePromtool(): string {
  assert.ok(
    existsSync(PROMTOOL),
    `promtool not found at ${PROMTOOL}: build it with scripts/build-control-plane.sh (CNI_BENCH_CP_TOOLS=promtool bash scripts/build-control-plane.sh)`,
  );
  return PROMTOOL;
}

/** Runs promtool; `input` goes to stdin. */
export function promtool(args: string[], input?: string): { status: number | null; out: string } {
  const r = spawnSync(requirePromtool(), args, { input, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** `promtool check metrics` on an exposition: passes only when it parses and lints clean. */
export function assertValidExposition(text: string, what: string): void {
  assert.ok(text.length > 0, `${what}: empty exposition`);
  const r = promtool(['check', 'metrics'], text);
  assert.equal(r.status, 0, `${what}: promtool check metrics failed:\n${r.out}`);
}

/** A kube-proxy node's dataplane sample from the samplers' fixtures. */
export function fixtureSample(): DataplaneSample {
  const ipt = parseIptablesSave(fixture('iptables-save-kube-proxy-nft.txt'));
  const nft = parseNftRuleset(fixture('nft-list-ruleset-kube-proxy.json'));
  return DataplaneSample.fromPartial({
    timeMs: 10_000,
    iptablesRules: ipt.totalRules,
    kubeServicesRules: ipt.kubeServicesRules,
    iptablesTableRules: Object.fromEntries(
      Object.entries(ipt.tables).map(([t, v]) => [t, Object.values(v.chains).reduce((n, c) => n + c.rules, 0)]),
    ),
    nftRules: nft.rules,
    nftSets: nft.sets,
    nftServiceIps: nft.serviceIps,
    conntrackCount: parseConntrackCount(fixture('conntrack-count.txt')),
    conntrackMax: 262144,
    processes: [
      { name: 'kube-proxy', pids: [41], cpuMillicores: 12, rssBytes: 50_000_000, threads: 9 },
      { name: 'cilium-agent', pids: [], rssBytes: 0, threads: 0 },
    ],
  });
}

/** BPF maps from the bpftool fixture, the first counted at 85% of its maximum. */
export function fixtureMaps(): BpfMapState[] {
  const maps = parseBpftoolMapShow(fixture('bpftool-map-show.json'));
  return groupBpfMaps(maps, new Map(maps.slice(0, 1).map((m) => [m.id, Math.floor(m.maxEntries * 0.85)])));
}
