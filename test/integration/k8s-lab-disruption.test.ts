/**
 * Disruption timelines with real parts: a 2-node lab whose nodes the real
 * kube-proxy v1.37 programs (iptables mode) from Services and EndpointSlices
 * the collector's KubernetesServiceFrontend created in the harness apiserver;
 * a tcp-echo server in two pods of node 0 behind one ClusterIP; the built-in
 * open-loop probe stream (new and kept connections, 100 ms bins) from a pod of
 * node 1 while, one at a time:
 * - kube-proxy on the client's node restarts (SIGTERM and start, rules left);
 * - one of the two endpoints is removed from the EndpointSlice, and the test
 *   measures how long until the client node's rules no longer send there;
 * - 200 Services (with their EndpointSlices) are created at once, 40 requests
 *   in flight, through the apiserver (the frontend's own scaler is paced for
 *   a shared cluster: 1,000 took 177 s here, far longer than a stream).
 * Each timeline must contain its event, and its summary must agree with its
 * bins (errors after the event, recovery not before the last bad bin).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, DiscoveryV1Api, type V1EndpointSlice } from '@kubernetes/client-node';
import { servicePair } from '../../collector/kubernetes/objects.js';
import { createLogger } from '../../core/log.js';
import { Lab } from '../../lab/lab.js';
import { type DisruptionSummary, parseTimeline, summariseDisruption, type Timeline } from '../../report/disruption.js';
import { renderDisruption } from '../../report/disruption-render.js';
import { COLLECTOR_NAMESPACE, collectorCluster, startKubeProxies } from '../support/harness/collector-cluster.js';
import type { RealKubeProxy } from '../support/harness/kube-proxy.js';
import { saveIptables, serviceCounts } from '../support/harness/kube-proxy-rules.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { DIST, waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const NS = COLLECTOR_NAMESPACE;
const ECHO_PORT = 7101;
const SERVICE_PORT = 7100;
const RATE = 100;
const SECONDS = 8;
const EVENT_AT_MS = 2500;
const ADDED = 200;
const log = createLogger({ test: 'k8s-lab-disruption' }, 'warn');
const tmp = mkdtempSync(join(tmpdir(), 'cnib-disruption-'));

const k8s = collectorCluster(notRoot);
after(() => rmSync(tmp, { recursive: true, force: true }));

/** The probe stream in `ns`: its output, and its start (wall clock) once its first attempt went out. */
function probe(ns: string, host: string, seconds: number): { out: Promise<string>; started: Promise<number> } {
  const child = spawn(
    'ip',
    [
      'netns',
      'exec',
      ns,
      process.execPath,
      `${DIST}agent/builtins/probe-stream.js`,
      '--host',
      host,
      '--port',
      String(SERVICE_PORT),
      '--duration',
      String(seconds),
      '--rate',
      String(RATE),
      '--timeout-ms',
      '1000',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c;
  });
  const started = new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
      const m = /"event":"started","startMs":(\d+)/.exec(stderr);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', () => reject(new Error(`probe-stream ended before it started: ${stderr}`)));
  });
  started.catch(() => undefined);
  const out = new Promise<string>((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`probe-stream exit ${code}: ${stderr}`)),
    ),
  );
  return { out, started };
}

/** Runs the probe stream and `event` EVENT_AT_MS into it; returns the timeline, the event's offset and the summary. */
async function around(
  t: TestContext,
  name: string,
  ns: string,
  host: string,
  event: () => Promise<void>,
): Promise<{ timeline: Timeline; summary: DisruptionSummary }> {
  const { out, started } = probe(ns, host, SECONDS);
  const began = await started;
  await sleep(Math.max(0, began + EVENT_AT_MS - Date.now()));
  const eventWall = Date.now();
  await event();
  const eventDoneMs = Date.now() - eventWall;
  const timeline = parseTimeline(await out);
  const eventAtMs = eventWall - timeline.startMs;
  assert.ok(timeline.startMs >= began && eventAtMs > timeline.binMs, `event at ${eventAtMs} ms into the stream`);
  const summary = summariseDisruption(timeline, eventAtMs);
  t.diagnostic(`${name} (event took ${eventDoneMs} ms)\n${renderDisruption(name, timeline, summary).join('\n')}`);
  // The summary agrees with the bins it came from.
  const first = Math.floor(eventAtMs / timeline.binMs);
  for (const k of summary.kinds) {
    const bins = timeline.bins.slice(first).map((b) => b[k.kind]);
    const errors = bins.reduce((a, b) => a + Object.values(b.errors).reduce((x, y) => x + y, 0), 0);
    assert.equal(k.errorsAfter, errors, `${name} ${k.kind}: errors after the event`);
    assert.equal(
      k.attemptsAfter,
      bins.reduce((a, b) => a + b.attempts, 0),
    );
    if (errors > 0) {
      assert.ok(k.firstErrorMs !== null && k.recoveredAfterMs >= k.firstErrorMs + timeline.binMs - timeline.binMs);
      assert.ok(k.recoveredAfterMs > 0, `${name} ${k.kind}: errors, so not at baseline from the start`);
    }
    assert.ok(k.recoveredAfterMs <= SECONDS * 1000 - eventAtMs + timeline.binMs);
  }
  const total = timeline.bins.reduce((a, b) => a + b.new.attempts, 0);
  assert.ok(total >= RATE * SECONDS * 0.95, `${name}: ${total} new-connection attempts of ${RATE * SECONDS}`);
  return { timeline, summary };
}

test('disruption timelines on the real kube-proxy: agent restart, an endpoint removed, 200 Services added', {
  skip: notRoot,
  timeout: 600_000,
}, async (t) => {
  const lab = await Lab.create({ nodes: 2, log, proxy: { mode: 'external' } });
  const proxies: RealKubeProxy[] = [];
  const echoes: ChildProcess[] = [];
  const frontend = k8s.frontend(log);
  try {
    const [serverNode, clientNode] = lab.plan.nodes;
    assert.ok(serverNode && clientNode);
    const [keep, gone] = serverNode.pods;
    const client = clientNode.pods[0];
    assert.ok(keep && gone && client);
    await startKubeProxies(k8s.cp, lab.plan.nodes, 'iptables', proxies);
    for (const pod of [keep, gone]) {
      const p = spawn(
        'ip',
        ['netns', 'exec', pod.ns, process.execPath, `${DIST}agent/builtins/tcp-echo.js`, '--port', String(ECHO_PORT)],
        { stdio: 'ignore' },
      );
      echoes.push(p);
    }
    await frontend.init();
    const svc = await frontend.expose('disrupt', SERVICE_PORT, [
      { ip: keep.ip, port: ECHO_PORT },
      { ip: gone.ip, port: ECHO_PORT },
    ]);
    // Programmed on the client's node: a short stream gets through without errors.
    await waitFor(
      `Service ${svc.ip} reachable from ${client.ns}`,
      async () => {
        const tl = parseTimeline(await probe(client.ns, svc.ip, 0.3).out);
        return tl.bins.every((b) => Object.keys(b.new.errors).length === 0 && b.new.attempts > 0);
      },
      60_000,
      500,
    );

    const kp = proxies[1] as RealKubeProxy;
    const restart = await around(t, 'kube-proxy restart (client node)', client.ns, svc.ip, () => kp.restart());
    assert.equal(kp.exitCode(), undefined, 'kube-proxy runs again');
    // iptables mode leaves its rules in place while it is down: kept connections keep their conntrack entries.
    const kept = restart.summary.kinds.find((k) => k.kind === 'kept');
    t.diagnostic(`kept connections through the restart: ${kept?.errorsAfter} errors of ${kept?.attemptsAfter}`);

    // Endpoint removed: the EndpointSlice loses `gone`; how long until the client node's rules stop sending there.
    const discovery = k8s.admin.makeApiClient(DiscoveryV1Api);
    let removedAt = 0;
    await around(t, `endpoint ${gone.ip} removed`, client.ns, svc.ip, async () => {
      const slice = (await discovery.readNamespacedEndpointSlice({
        name: 'cni-bench-disrupt',
        namespace: NS,
      })) as V1EndpointSlice;
      slice.endpoints = (slice.endpoints ?? []).filter((e) => !e.addresses.includes(gone.ip));
      removedAt = Date.now();
      await discovery.replaceNamespacedEndpointSlice({ name: 'cni-bench-disrupt', namespace: NS, body: slice });
    });
    const goneRule = `--to-destination ${gone.ip}:${ECHO_PORT}`;
    const back = (await discovery.readNamespacedEndpointSlice({
      name: 'cni-bench-disrupt',
      namespace: NS,
    })) as V1EndpointSlice;
    assert.deepEqual(
      (back.endpoints ?? []).flatMap((e) => e.addresses),
      [keep.ip],
      'the slice holds one endpoint',
    );
    await waitFor(
      `${gone.ip} out of ${clientNode.ns}'s rules`,
      async () => !(await saveIptables(clientNode.ns)).includes(goneRule),
      60_000,
      100,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n--- kube-proxy of ${clientNode.ns}\n${kp.tail(30)}`, { cause: err });
    });
    t.diagnostic(`endpoint removed: no rule of ${clientNode.ns} sends to it after ≤ ${Date.now() - removedAt} ms`);

    const core = k8s.admin.makeApiClient(CoreV1Api);
    const pairs = Array.from({ length: ADDED }, (_, i) =>
      servicePair(
        NS,
        `cni-bench-added-${i}`,
        80,
        [{ ip: `198.18.99.${1 + (i % 200)}`, port: 80 }],
        'disruption',
        'scale-dummy',
      ),
    );
    await around(t, `${ADDED} Services added at once`, client.ns, svc.ip, async () => {
      for (let i = 0; i < pairs.length; i += 40)
        await Promise.all(
          pairs.slice(i, i + 40).map(async (p) => {
            await core.createNamespacedService({ namespace: NS, body: p.service });
            await discovery.createNamespacedEndpointSlice({ namespace: NS, body: p.slice });
          }),
        );
    });
    await waitFor(
      `${ADDED} more Services in ${clientNode.ns}`,
      async () => (await serviceCounts(clientNode.ns)).kubeServicesRules >= ADDED,
      120_000,
      500,
    );
  } finally {
    for (const p of echoes) p.kill('SIGTERM');
    // The added Services go with the harness apiserver (after()); its kube-proxies stop below.
    await frontend.remove('disrupt').catch(() => undefined);
    for (const kp of proxies) await kp.stop().catch(() => undefined);
    await lab.destroy();
  }
  assert.deepEqual(labNamespaces(lab.plan.id), []);
});
