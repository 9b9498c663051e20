/**
 * The LB-map preflight's decision (pure) and its raise/verify/revert sequence
 * driven through callbacks (the lab test drives it against real Cilium:
 * test/integration/lab-cilium-preflight.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ensureLbMapFits,
  type LbMapPreflightDeps,
  lbMapPreflight,
  type NodeLbMaps,
  nodeLbMaps,
  notReadyAfterRestart,
} from '../../../../collector/runs/cilium-preflight.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { createLogger } from '../../../../core/log.js';
import { DataplaneSample } from '../../../../gen/cnibench/v1/agent.js';

const node = (name: string, serviceEntries: number, max: number): NodeLbMaps => ({
  node: name,
  serviceEntries,
  backendEntries: 0,
  servicesMax: max,
  backendsMax: max,
  frontends: 0,
});

// The study's largest step: 30,000 Services x (4 endpoints + frontend + wildcard) = 180,000 entries,
// more than Cilium's default of 65,536 (hand-computed; the next power of two that fits is 262,144).
test('30,000 Services with 4 endpoints do not fit the default LB map, and the fix is the exact command', () => {
  const p = lbMapPreflight(30_000, 4, {});
  assert.deepEqual([p.needed, p.max, p.fits, p.suggest], [180_000, 65_536, false, 262_144]);
  assert.equal(
    p.fix,
    `kubectl -n kube-system patch configmap cilium-config --type merge -p '{"data":{"bpf-lb-map-max":"262144"}}' && kubectl -n kube-system rollout restart daemonset/cilium && kubectl -n kube-system rollout status daemonset/cilium`,
  );
  assert.match(p.source, /cilium-config/);
});

test("the loaded maps' size and entries come from the nodes' samples, the smallest and the fullest", () => {
  // cilium-config says 262144, but n1 still runs with 65536 loaded: the loaded map decides.
  const p = lbMapPreflight(12_000, 3, { 'bpf-lb-map-max': '262144' }, [
    node('n0', 10, 262_144),
    node('n1', 4_000, 65_536),
  ]);
  assert.deepEqual([p.needed, p.max, p.configured, p.fits], [12_000 * 5 + 4_000, 65_536, 262_144, true]);
  assert.equal(p.source, 'loaded maps on n0, n1');
  assert.equal(lbMapPreflight(12_000, 3, {}, [node('n0', 6_000, 65_536)]).fits, false);
  assert.equal(lbMapPreflight(10, 1, {}, [node('n0', 2, 32)]).fits, true);
  assert.equal(lbMapPreflight(11, 1, {}, [node('n0', 2, 32)]).fits, false);
  assert.equal(lbMapPreflight(1, 1, {}, [], { namespace: 'cilium' }).fix, '');
  assert.match(lbMapPreflight(11, 1, {}, [node('n0', 2, 32)], { namespace: 'cilium' }).fix, /^kubectl -n cilium patch/);
});

test('a malformed bpf-lb-map-max names the key', () => {
  assert.throws(
    () => lbMapPreflight(1, 1, { 'bpf-lb-map-max': 'lots' }),
    (e: unknown) => isCniBenchError(e, 'E_VALIDATION') && /bpf-lb-map-max/.test(e.message),
  );
});

test('a sample without Cilium gives no node; one with Cilium gives its entries and loaded sizes', () => {
  assert.equal(nodeLbMaps('n0', DataplaneSample.fromPartial({})), undefined);
  assert.equal(nodeLbMaps('n0', undefined), undefined);
  const s = DataplaneSample.fromPartial({
    cilium: { serviceEntries: 3, backendEntries: 1, lbServicesMaxEntries: 512, lbBackendsMaxEntries: 512 },
  });
  assert.deepEqual(nodeLbMaps('n0', s), { ...node('n0', 3, 512), backendEntries: 1 });
});

/** A pretend Cilium: the config holds a value; a restart makes every node's loaded maps take it (unless `stuck`). */
function world(initial: string | undefined, opts: { allow: boolean; stuck?: string }) {
  const calls: string[] = [];
  let config: Record<string, string> = initial === undefined ? {} : { 'bpf-lb-map-max': initial };
  let loaded = Number(initial ?? 65_536);
  const deps: LbMapPreflightDeps = {
    readConfig: async () => ({ ...config }),
    writeConfig: async (v) => {
      calls.push(`write ${v}`);
      const { 'bpf-lb-map-max': _, ...rest } = config;
      config = v === null ? rest : { ...rest, 'bpf-lb-map-max': v };
    },
    restart: async () => {
      calls.push('restart');
      loaded = Number(config['bpf-lb-map-max'] ?? 65_536);
    },
    sampleNodes: async () =>
      new Map(
        ['n0', 'n1'].map((n) => [
          n,
          DataplaneSample.fromPartial({
            cilium: {
              serviceEntries: 4,
              lbServicesMaxEntries: opts.stuck === n ? 256 : loaded,
              lbBackendsMaxEntries: opts.stuck === n ? 256 : loaded,
            },
          }),
        ]),
      ),
    allowChange: opts.allow,
    log: createLogger({ test: 'preflight' }, 'error'),
    verifyTimeoutMs: 50,
    pollMs: 5,
  };
  return { deps, calls, config: () => config };
}

test('without the opt-in a sweep that does not fit is refused with the exact command, and nothing changes', async () => {
  const w = world('256', { allow: false });
  await assert.rejects(
    ensureLbMapFits(100, 2, w.deps),
    (e: unknown) =>
      isCniBenchError(e, 'E_VALIDATION') &&
      e.details.field === 'serviceScale.steps' &&
      e.message.includes(`"bpf-lb-map-max":"65536"`) &&
      /need 404 .* holds 256 \(loaded maps on n0, n1\)/.test(e.message),
  );
  assert.deepEqual(w.calls, []);
});

test('with the opt-in: written, restarted, verified on every node; revert writes back, restarts and verifies', async () => {
  const w = world('256', { allow: true });
  const r = await ensureLbMapFits(100, 2, w.deps);
  assert.equal(r?.change?.to, 65_536);
  assert.deepEqual(w.calls, ['write 65536', 'restart']);
  assert.equal(w.config()['bpf-lb-map-max'], '65536');
  assert.deepEqual(await r?.change?.revert().then((x) => x.restoredTo), 256);
  assert.deepEqual(w.calls, ['write 65536', 'restart', 'write 256', 'restart']);
  assert.equal(w.config()['bpf-lb-map-max'], '256');
  // An unset key goes back to unset.
  const u = world(undefined, { allow: true });
  u.deps.sampleNodes = async () =>
    new Map([
      [
        'n0',
        DataplaneSample.fromPartial({
          cilium: { serviceEntries: 60_000, lbServicesMaxEntries: 65_536, lbBackendsMaxEntries: 65_536 },
        }),
      ],
    ]);
  await assert.rejects(ensureLbMapFits(10_000, 1, u.deps), /do not read max_entries 131072/);
  assert.deepEqual(
    u.calls,
    ['write 131072', 'restart', 'write null', 'restart'],
    'a raise that did not take is undone',
  );
  assert.deepEqual(u.config(), {});
});

test('a node whose loaded map never takes the new size fails the raise, naming the node, and the change is undone', async () => {
  const w = world('256', { allow: true, stuck: 'n1' });
  await assert.rejects(ensureLbMapFits(100, 2, w.deps), /n1: services 256, backends 256/);
  assert.equal(w.config()['bpf-lb-map-max'], '256');
});

test('no cilium-config: nothing to check', async () => {
  const w = world('256', { allow: true });
  w.deps.readConfig = async () => undefined;
  assert.equal(await ensureLbMapFits(100_000, 4, w.deps), undefined);
});

test('after a restart a node is ready only with the new size and every frontend it had before back', () => {
  const m = (servicesMax: number, frontends: number): NodeLbMaps => ({
    ...node('n0', 10, servicesMax),
    frontends,
  });
  assert.equal(notReadyAfterRestart('n0', undefined, 512), 'n0: no Cilium maps sampled');
  assert.equal(notReadyAfterRestart('n0', m(256, 9), 512), 'n0: services 256, backends 256');
  // The map reads right but the restarted agent has not yet filled it from the apiserver.
  assert.equal(
    notReadyAfterRestart('n0', m(512, 1), 512, 3),
    'n0: 1 of the 3 frontends it had before the restart are back',
  );
  assert.equal(notReadyAfterRestart('n0', m(512, 3), 512, 3), undefined);
  assert.equal(notReadyAfterRestart('n0', m(512, 0), 512), undefined, 'no count asked (the revert)');
});

test('the raise waits for the frontends each node had before the restart, not only the size', async () => {
  const w = world('256', { allow: true });
  let polls = 0;
  const sample = w.deps.sampleNodes;
  let restarted = false;
  const restart = w.deps.restart;
  w.deps.restart = async () => {
    restarted = true;
    await restart();
  };
  w.deps.sampleNodes = async () => {
    const got = await sample();
    if (restarted) polls++;
    // Before the restart 3 frontends; after it, the agents fill their new maps over three polls.
    const frontends = restarted ? Math.min(3, polls - 1) : 3;
    return new Map(
      [...got].map(([n, s]) => [
        n,
        DataplaneSample.fromPartial({ cilium: { ...s?.cilium, programmedFrontends: frontends } }),
      ]),
    );
  };
  w.deps.verifyTimeoutMs = 5_000;
  const r = await ensureLbMapFits(100, 2, w.deps);
  assert.equal(r?.change?.to, 65_536);
  assert.equal(polls, 4, 'ready at the fourth poll after the restart, when 3 frontends are back');
});
