import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ClusterHubble,
  flowsSeen,
  type HubbleCluster,
  hubbleStateProblems,
} from '../../../../collector/kubernetes/conditions-hubble.js';
import type { ConditionProbes, ConditionTarget, NodeHubble } from '../../../../core/conditions.js';
import { createLogger } from '../../../../core/log.js';
import type { HubbleReading } from '../../../../gen/cnibench/v1/agent.js';

const SERVER = '10.0.1.5';
const CLIENT = '10.0.2.7';
const log = createLogger({ component: 'test' }, 'error');

const reading = (r: Partial<HubbleReading>): HubbleReading => ({
  nodeName: 'n',
  state: 'Ok',
  observerAnswered: true,
  seenFlows: 0,
  numFlows: 0,
  maxFlows: 4095,
  flows: [],
  errors: [],
  socket: '/proc/1/root/var/run/cilium/hubble.sock',
  ...r,
});
const node = (agent: string, r: Partial<HubbleReading> | undefined, server = false): NodeHubble => ({
  agent,
  server,
  reading: r ? reading(r) : undefined,
});

test('Hubble counts on only where every node reads Ok with its observer answering, off only Disabled with none', () => {
  assert.deepEqual(hubbleStateProblems([node('a', {}), node('b', {})], 'Ok'), []);
  assert.deepEqual(hubbleStateProblems([], 'Ok'), ['no agent is connected to read Hubble from']);
  assert.deepEqual(
    hubbleStateProblems(
      [
        node('a', { state: 'Disabled', observerAnswered: false }),
        node('b', { observerAnswered: false, errors: ['observer ServerStatus: no Hubble socket'] }),
        node('c', undefined),
        node('d', { state: '', observerAnswered: false, errors: ['no cilium-agent API on this node'] }),
      ],
      'Ok',
    ),
    [
      'a: Hubble Disabled',
      'b: Hubble Ok but observer ServerStatus: no Hubble socket',
      'c: no Hubble reading (agent did not answer)',
      'd: Hubble not read (no cilium-agent API on this node)',
    ],
  );
  assert.deepEqual(hubbleStateProblems([node('a', { state: 'Disabled', observerAnswered: false })], 'Disabled'), []);
  assert.deepEqual(hubbleStateProblems([node('a', { state: 'Disabled' })], 'Disabled'), [
    'a: Hubble Disabled but /proc/1/root/var/run/cilium/hubble.sock answers',
  ]);
});

test('flows count only when the counter moved and every client has a flow to the server', () => {
  const before = node('s', { seenFlows: 100 }, true);
  const flows = [
    { source: CLIENT, destination: SERVER, verdict: 1 },
    { source: '10.0.9.9', destination: SERVER, verdict: 1 },
  ];
  assert.deepEqual(flowsSeen(before, node('s', { seenFlows: 130, flows }, true), SERVER, [CLIENT]), {
    ok: true,
    newFlows: 30,
    matched: 1,
    from: [CLIENT],
    missing: [],
  });
  assert.equal(flowsSeen(before, node('s', { seenFlows: 100, flows }, true), SERVER, [CLIENT]).ok, false);
  const partial = flowsSeen(before, node('s', { seenFlows: 130, flows }, true), SERVER, [CLIENT, '10.0.3.3']);
  assert.deepEqual([partial.ok, partial.missing], [false, ['10.0.3.3']]);
  assert.equal(flowsSeen(before, undefined, SERVER, [CLIENT]).ok, false);
});

/** A cluster whose agents read what enable-hubble last rolled out says; `seesTraffic` false: the observer never counts. */
function fakeCluster(
  initial: string | undefined,
  seesTraffic = true,
  clients: Record<string, string> = { 'agent-1': CLIENT },
) {
  const config: Record<string, string> = initial === undefined ? {} : { 'enable-hubble': initial };
  const calls: string[] = [];
  let rolled = config['enable-hubble'] === 'true';
  let seen = 0;
  let annotation: string | undefined;
  /** The observer's last flows to the server come from the client that probed last (a burst fills them). */
  let lastFrom = '';
  const cluster: HubbleCluster = {
    read: async () => ({ ...config }),
    readAnnotation: async () => annotation,
    setHubble: async (value, before) => {
      calls.push(`set ${value} before=${before}`);
      if (value === null) delete config['enable-hubble'];
      else config['enable-hubble'] = value;
      annotation = before ?? undefined;
    },
    restart: async () => {
      calls.push('restart');
      rolled = config['enable-hubble'] === 'true';
      seen = 0;
    },
  };
  const probes: ConditionProbes = {
    allowed: Object.keys(clients).map((c) => ({ ns: c, name: c })),
    others: [],
    listen: async () => ({ stop: async () => {} }),
    probe: async (from) => {
      if (rolled && seesTraffic) seen += 12;
      lastFrom = clients[from.name] ?? '';
      return 'connected';
    },
    hubble: async () =>
      ['agent-0', 'agent-1'].map((a) =>
        rolled
          ? node(
              a,
              {
                seenFlows: seen,
                flows: a === 'agent-0' && seen ? [{ source: lastFrom, destination: SERVER, verdict: 1 }] : [],
              },
              a === 'agent-0',
            )
          : node(a, { state: 'Disabled', observerAnswered: false, errors: ['no Hubble socket'] }, a === 'agent-0'),
      ),
  };
  const target: ConditionTarget = { runId: 'r1', serverPodIp: SERVER, clientPodIps: Object.values(clients), probes };
  return { cluster, calls, target, config, annotation: () => annotation };
}

test('apply sets enable-hubble with the value before marked, rolls Cilium and verifies; revert puts the value back', async () => {
  const f = fakeCluster('false');
  const h = new ClusterHubble(f.cluster, 'kube-system', log);
  const on = await h.apply(f.target, new AbortController().signal);
  assert.match(
    on.how,
    /observer on agent-0 counted 12 new flows and GetFlows, read after each client's burst, returned 1 flows to 10\.0\.1\.5 from 10\.0\.2\.7/,
  );
  assert.equal(f.annotation(), 'false');
  const off = await h.revert(f.target);
  assert.match(off.how, /enable-hubble back to false.*every agent's node reads Hubble Disabled \(agent-0, agent-1\)/);
  assert.deepEqual(f.calls, ['set true before=false', 'restart', 'set false before=null', 'restart']);
  assert.deepEqual(f.config, { 'enable-hubble': 'false' });
  assert.equal(f.annotation(), undefined);
  assert.match((await h.revert(f.target)).how, /nothing was applied/);
});

test('an unset enable-hubble is removed again; a collector that died with Hubble on is recovered at start', async () => {
  const f = fakeCluster(undefined);
  const h = new ClusterHubble(f.cluster, 'kube-system', log);
  await h.apply(f.target, new AbortController().signal);
  assert.equal(f.annotation(), '');
  // A new collector starts: it finds the mark and puts the value before back.
  const fresh = new ClusterHubble(f.cluster, 'kube-system', log);
  assert.equal(await fresh.recover(), true);
  assert.deepEqual(f.config, {});
  assert.equal(await fresh.recover(), false);
});

test('already on is refused (no off to compare); an observer that never sees the traffic fails the apply, and revert still restores', async () => {
  const on = fakeCluster('true');
  await assert.rejects(
    new ClusterHubble(on.cluster, 'kube-system', log).apply(on.target, new AbortController().signal),
    /already has enable-hubble=true/,
  );
  assert.deepEqual(on.calls, []);
  const blind = fakeCluster('false', false);
  const h = new ClusterHubble(blind.cluster, 'kube-system', log);
  await assert.rejects(
    h.apply(blind.target, new AbortController().signal),
    /did not see the probe traffic: 0 new flows, flows to 10\.0\.1\.5 from no client, none from 10\.0\.2\.7/,
  );
  await h.revert(blind.target);
  assert.deepEqual(blind.config, { 'enable-hubble': 'false' });
});

test("every client's flows are found although each burst pushes the one before out of GetFlows' last flows", async () => {
  const f = fakeCluster('false', true, { 'agent-1': CLIENT, 'agent-peer-0': '10.0.1.9' });
  const on = await new ClusterHubble(f.cluster, 'kube-system', log).apply(f.target, new AbortController().signal);
  assert.match(on.how, /counted 24 new flows .* returned 2 flows to 10\.0\.1\.5 from 10\.0\.2\.7, 10\.0\.1\.9$/);
});
