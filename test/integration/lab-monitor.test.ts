/**
 * Monitoring mode in a real 5-node lab with a 2 s interval: every node is
 * probed by its peers; every agent's /metrics and the collector's pass
 * promtool; one node's link taken down makes its probes and its peers' probes
 * to it fail within two intervals (error counters, peer_up, the collector's
 * matrix), and they recover when it comes back; a node's conntrack table
 * filled past 80% (the maximum lowered first: on this kernel it is global, so
 * it is put back) and a BPF map filled to 85% show in the fill gauges; a
 * benchmark run pauses probes on its two nodes and they resume after it.
 * Lab traffic stays in 198.18.0.0/15 inside the lab's namespaces, and
 * everything is removed afterwards, also on failure.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../core/log.js';
import type { MonitorSnapshot } from '../../gen/cnibench/v1/monitor.js';
import { type MonitorLab, startMonitorLab } from '../../lab/monitor-session.js';
import type { LabNode } from '../../lab/plan.js';
import { fillConntrack } from '../support/helpers/fill-conntrack.js';
import { labNamespaces, labStateFiles, rootLinks, rootRules } from '../support/helpers/host-state.js';
import { assertValidExposition, requirePromtool } from '../support/helpers/monitor-support.js';
import { DIST, getJson, waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const INTERVAL_MS = 2000;
const CT_MAX = '/proc/sys/net/netfilter/nf_conntrack_max';
const tmp = mkdtempSync(join(tmpdir(), 'cnib-monitor-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const POD_TYPES = ['tcp-connect', 'tcp-rr', 'host-tcp-connect', 'host-tcp-rr'];

/** An agent's /metrics, fetched from inside its pod namespace (the lab has no route from the root namespace). */
function agentMetrics(node: LabNode): string {
  const script = 'fetch("http://127.0.0.1:8477/metrics").then((r) => r.text()).then((t) => process.stdout.write(t))';
  return execFileSync('ip', ['netns', 'exec', node.pods[0]?.ns ?? '', process.execPath, '-e', script], {
    encoding: 'utf8',
    timeout: 10_000,
  });
}

/** Sum of the samples of `name` whose labels include every pair of `labels`. */
function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

function cells(s: MonitorSnapshot, pred: (c: MonitorSnapshot['matrix'][number]) => boolean) {
  return s.matrix.filter((c) => POD_TYPES.includes(c.type) && pred(c));
}

function ipn(ns: string, args: string[]): void {
  execFileSync('ip', ['-n', ns, ...args], { timeout: 10_000 });
}

/** The node's uplink back up, with the routes to the other nodes' pods that taking it down removed. */
function uplinkUp(node: LabNode): void {
  ipn(node.ns, ['link', 'set', 'eth0', 'up']);
  for (const r of node.routes) ipn(node.ns, ['route', 'replace', r.dst, 'via', r.via, 'dev', 'eth0']);
}

async function coverage(t: TestContext, m: MonitorLab, monitor: () => Promise<MonitorSnapshot>): Promise<void> {
  const s = await waitFor(
    'every node probing and probed by its 4 peers, every planned cell ok',
    async () => {
      const x = await monitor();
      const ok =
        x.nodes.length === 5 &&
        x.nodes.every((n) => n.state === 'probing' && n.probedOk === 4 && n.probedFailing === 0) &&
        cells(x, (c) => c.state !== 'ok').length === 0;
      return ok ? x : undefined;
    },
    30_000,
    200,
  );
  t.diagnostic(
    `latency over the window: ${(s.summary?.latency ?? []).map((l) => `${l.type} p50 ${Math.round(l.p50Us)} µs p99 ${Math.round(l.p99Us)} µs`).join('; ')}`,
  );
  assert.equal(
    cells(s, () => true).length,
    5 * 4 * 4,
    'four probe types to each of four peers from each of five nodes',
  );
  assert.ok(
    s.matrix.some((c) => c.type === 'http-service' && c.state === 'ok'),
    "Service probes through kube-proxy's rules",
  );
  requirePromtool();
  for (const node of m.lab.plan.nodes) {
    // Monitoring reads rules again only once the last read took at most 1/30 of the time since
    // (MONITOR_RULES_CADENCE): on a busy machine the gauge can lag the probe Service by seconds.
    const text = await waitFor(
      `${node.name} counts incoming probes and shows the probe Service in KUBE-SERVICES`,
      () => {
        const x = agentMetrics(node);
        return metric(x, 'cni_bench_probe_incoming_sources', { node: node.name }) > 0 &&
          metric(x, 'cni_bench_iptables_kube_services_rules', { node: node.name }) >= 2
          ? x
          : undefined;
      },
      30_000,
      250,
    );
    assert.equal(metric(text, 'cni_bench_probe_peers', { node: node.name }), 4);
    assertValidExposition(text, `agent ${node.name}`);
  }
  assertValidExposition(await (await fetch(`${m.collector.httpUrl}/metrics`)).text(), 'collector');
}

async function linkFault(t: TestContext, m: MonitorLab, monitor: () => Promise<MonitorSnapshot>): Promise<void> {
  const down = m.lab.plan.nodes[2] as LabNode;
  const peer = m.lab.plan.nodes[0] as LabNode;
  const errorsBefore = metric(agentMetrics(peer), 'cni_bench_probe_errors_total', { target_node: down.name });
  const began = Date.now();
  ipn(down.ns, ['link', 'set', 'eth0', 'down']);
  try {
    const s = await waitFor(
      `probes from and to ${down.name} failing`,
      async () => {
        const x = await monitor();
        const to = cells(x, (c) => c.targetNode === down.name);
        const from = cells(x, (c) => c.sourceNode === down.name);
        return to.length === 16 && from.length === 16 && [...to, ...from].every((c) => c.state === 'failing')
          ? x
          : undefined;
      },
      5 * INTERVAL_MS,
      100,
    );
    const ms = Date.now() - began;
    t.diagnostic(
      `link down: every probe from and to ${down.name} failing after ${ms} ms (interval ${INTERVAL_MS} ms); reasons ${[...new Set(s.matrix.filter((c) => c.state === 'failing').map((c) => c.errorReason))].join(', ')}`,
    );
    assert.ok(ms <= 2 * INTERVAL_MS, `failures shown after ${ms} ms, more than two intervals`);
    assert.equal(s.nodes.find((n) => n.nodeName === down.name)?.probedFailing, 4);
    const text = agentMetrics(peer);
    assert.ok(metric(text, 'cni_bench_probe_errors_total', { target_node: down.name }) > errorsBefore);
    assert.equal(metric(text, 'cni_bench_probe_peer_up', { target_node: down.name }), 0);
    const own = agentMetrics(down);
    assert.ok(metric(own, 'cni_bench_probe_errors_total', { source_node: down.name }) >= 16, 'its own probes fail too');
    const c = await (await fetch(`${m.collector.httpUrl}/metrics`)).text();
    assert.equal(metric(c, 'cni_bench_monitor_node_probers', { node: down.name, state: 'failing' }), 4);
  } finally {
    uplinkUp(down);
  }
  await waitFor(
    `probes from and to ${down.name} ok again`,
    async () => {
      const x = await monitor();
      return cells(x, (c) => c.targetNode === down.name || c.sourceNode === down.name).every((c) => c.state === 'ok')
        ? x
        : undefined;
    },
    10 * INTERVAL_MS,
    100,
  );
  t.diagnostic(`link up: recovered ${Date.now() - began} ms after it went down`);
  await waitFor(
    'peer_up back to 1',
    () => metric(agentMetrics(peer), 'cni_bench_probe_peer_up', { target_node: down.name }) === 1,
    4 * INTERVAL_MS,
    250,
  );
}

async function conntrackFault(t: TestContext, m: MonitorLab): Promise<void> {
  const node = m.lab.plan.nodes[3] as LabNode;
  const original = readFileSync(CT_MAX, 'utf8').trim();
  // nf_conntrack_max is read-only in a non-initial namespace here: the global value is lowered and put back.
  try {
    execFileSync('ip', ['netns', 'exec', node.ns, 'sysctl', '-q', '-w', 'net.netfilter.nf_conntrack_max=16384'], {
      stdio: 'ignore',
    });
  } catch {
    // Refused: not per namespace.
  }
  const perNetns =
    readFileSync(CT_MAX, 'utf8').trim() === original &&
    execFileSync('ip', ['netns', 'exec', node.ns, 'sysctl', '-n', 'net.netfilter.nf_conntrack_max'], {
      encoding: 'utf8',
    }).trim() === '16384';
  t.diagnostic(`nf_conntrack_max per network namespace on this kernel: ${perNetns}`);
  if (!perNetns) writeFileSync(CT_MAX, '16384');
  try {
    // Unreplied UDP flows from the node to its own pod: only this node's table fills (they expire after 30 s).
    fillConntrack(node.ns, node.pods[0]?.ip ?? '', Math.ceil(16384 * 0.9));
    const text = await waitFor(
      `${node.name} conntrack fill above 0.8`,
      () => {
        const x = agentMetrics(node);
        return metric(x, 'cni_bench_conntrack_fill_ratio', { node: node.name }) > 0.8 ? x : undefined;
      },
      3 * INTERVAL_MS,
      250,
    );
    t.diagnostic(
      `conntrack: ${metric(text, 'cni_bench_conntrack_entries', { node: node.name })} of ${metric(text, 'cni_bench_conntrack_max_entries', { node: node.name })}`,
    );
    const other = agentMetrics(m.lab.plan.nodes[4] as LabNode);
    assert.ok(metric(other, 'cni_bench_conntrack_fill_ratio') < 0.1, "the other nodes' tables did not fill");
  } finally {
    if (!perNetns) writeFileSync(CT_MAX, original);
  }
  assert.equal(readFileSync(CT_MAX, 'utf8').trim(), original, 'nf_conntrack_max put back');
}

async function bpfMapFill(t: TestContext, m: MonitorLab, name: string): Promise<void> {
  const pin = `/sys/fs/bpf/${name}`;
  execFileSync('bpftool', [
    'map',
    'create',
    pin,
    'type',
    'hash',
    'key',
    '4',
    'value',
    '4',
    'entries',
    '20',
    'name',
    name,
  ]);
  try {
    for (let i = 0; i < 17; i++)
      execFileSync('bpftool', [
        'map',
        'update',
        'pinned',
        pin,
        'key',
        String(i),
        '0',
        '0',
        '0',
        'value',
        '1',
        '0',
        '0',
        '0',
      ]);
    const node = m.lab.plan.nodes[1] as LabNode;
    await waitFor(
      `${node.name} sees ${name} 85% full`,
      () => metric(agentMetrics(node), 'cni_bench_bpf_map_fill_ratio', { node: node.name, map: name }) === 0.85,
      3 * INTERVAL_MS,
      250,
    );
    t.diagnostic(`BPF map ${name}: 17 of 20 entries seen by the agents`);
  } finally {
    rmSync(pin, { force: true });
  }
}

async function pauseDuringRun(t: TestContext, m: MonitorLab, monitor: () => Promise<MonitorSnapshot>): Promise<void> {
  const [n0, n1, n2, n3, n4] = m.lab.plan.nodes as LabNode[];
  const probesTo = (names: string[]) =>
    [n2, n3, n4].reduce((sum, n) => {
      const x = agentMetrics(n as LabNode);
      return (
        sum +
        names.reduce(
          (s, target) =>
            s +
            metric(x, 'cni_bench_probe_duration_seconds_count', { target_node: target }) +
            metric(x, 'cni_bench_probe_errors_total', { target_node: target }),
          0,
        )
      );
    }, 0);
  const probed = (n: LabNode) => metric(agentMetrics(n), 'cni_bench_probe_rounds_total', { outcome: 'probed' });
  const run = m.collector.api.create({
    name: 'pause',
    serverNode: n0?.name,
    clientNode: n1?.name,
    warmupSeconds: 0,
    rounds: 1,
    durationSeconds: 12,
    measurements: [{ kind: 'throughput', path: 'pod-to-pod', protocol: 'udp', udpTargetMbps: 10 }],
  });
  await waitFor(
    'both run nodes paused',
    async () => {
      const s = await monitor();
      return (
        ['lab-n0', 'lab-n1'].every((n) => s.nodes.find((x) => x.nodeName === n)?.state === 'paused') &&
        s.summary?.pausedForRun === run.id
      );
    },
    5000,
    100,
  );
  // Probes already in flight when the pause began finish first.
  await sleep(INTERVAL_MS);
  const before = {
    to: probesTo(['lab-n0', 'lab-n1']),
    n0: probed(n0 as LabNode),
    n1: probed(n1 as LabNode),
    others: probed(n2 as LabNode),
  };
  await sleep(3 * INTERVAL_MS);
  assert.equal(m.collector.orchestrator.activeRunId(), run.id, 'the run is still going');
  const during = {
    to: probesTo(['lab-n0', 'lab-n1']),
    n0: probed(n0 as LabNode),
    n1: probed(n1 as LabNode),
    others: probed(n2 as LabNode),
  };
  t.diagnostic(`during the run: ${JSON.stringify({ before, during })}`);
  assert.equal(during.to, before.to, "nobody probed the run's nodes");
  assert.equal(during.n0, before.n0, 'lab-n0 did not probe');
  assert.equal(during.n1, before.n1, 'lab-n1 did not probe');
  assert.ok(during.others > before.others, 'the other nodes kept probing');
  assert.ok(metric(agentMetrics(n0 as LabNode), 'cni_bench_probe_paused', { node: 'lab-n0' }) === 1);
  await m.collector.orchestrator.wait(run.id);
  assert.equal(m.collector.api.get(run.id).state, 'succeeded', JSON.stringify(m.collector.api.get(run.id)));
  await waitFor(
    "probes resumed on the run's nodes",
    async () => {
      const s = await monitor();
      return (
        s.nodes.every((n) => n.state === 'probing') &&
        probed(n0 as LabNode) > during.n0 &&
        probesTo(['lab-n0', 'lab-n1']) > during.to
      );
    },
    5 * INTERVAL_MS,
    200,
  );
}

test('monitoring mode on a 5-node lab: coverage, valid metrics, faults seen within two intervals, pause during a run', {
  skip: notRoot,
  timeout: 600_000,
}, async (t) => {
  requirePromtool();
  const links = rootLinks();
  const rules = rootRules();
  const ctMax = readFileSync(CT_MAX, 'utf8').trim();
  const id = randomBytes(4).toString('hex');
  const bpfName = `cnib_${id}`;
  const log = createLogger({ component: 'test' }, 'warn');
  const m = await startMonitorLab(
    {
      nodes: 5,
      id,
      monitor: { intervalS: INTERVAL_MS / 1000, bpfMaps: [bpfName] },
      dbPath: join(tmp, 'lab.db'),
      agentWaitMs: 60_000,
    },
    log,
  );
  const monitor = async () => (await getJson(`${m.collector.httpUrl}/v1/monitor`)).body as MonitorSnapshot;
  try {
    await coverage(t, m, monitor);
    await linkFault(t, m, monitor);
    await conntrackFault(t, m);
    await bpfMapFill(t, m, bpfName);
    await pauseDuringRun(t, m, monitor);
  } finally {
    for (const n of m.lab.plan.nodes) {
      try {
        uplinkUp(n);
      } catch {
        // Its namespace may be gone already.
      }
    }
    if (readFileSync(CT_MAX, 'utf8').trim() !== ctMax) writeFileSync(CT_MAX, ctMax);
    rmSync(`/sys/fs/bpf/${bpfName}`, { force: true });
    await m.close();
  }
  // This lab's only: another checkout's lab may be running beside it on a shared machine.
  assert.deepEqual(labNamespaces(id), []);
  assert.deepEqual(labStateFiles(undefined, id), []);
  const procs = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => /agent\/main\.js|host-responder-main\.js/.test(l) && l.includes(DIST));
  assert.deepEqual(procs, []);
  assert.equal(rootLinks(), links);
  assert.equal(rootRules(), rules);
  assert.equal(readFileSync(CT_MAX, 'utf8').trim(), ctMax);
  assert.ok(!existsSync(`/sys/fs/bpf/${bpfName}`));
});
