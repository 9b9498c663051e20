/**
 * Lab agents each with their own identity, as cluster agents: the lab's
 * collector is started with the lab's agent key, every real agent (in its pod
 * namespace, over the lab's control socket) presents its own node's token and
 * is admitted, and a caller holding one node's token cannot register as, or
 * take the session of, another node; no token, or a token minted with another
 * key, is refused too. The key and tokens go with the lab.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { status } from '@grpc/grpc-js';
import { type Collector, collectorConfig, nodeToken, startCollector } from '../../collector/index.js';
import { createLogger } from '../../core/log.js';
import { Lab } from '../../lab/lab.js';
import { labNamespaces, labStateFiles } from '../support/helpers/host-state.js';
import { waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';
import { SimAgent } from '../support/helpers/sim-agent.js';

const log = createLogger({ test: 'lab-agent-identity' }, 'error');
const tmp = mkdtempSync(join(tmpdir(), 'cnib-identity-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('lab agents speak only for their own node', { skip: notRoot, timeout: 300_000 }, async () => {
  const lab = await Lab.create({ nodes: 2, log });
  const id = lab.plan.id;
  let collector: Collector | undefined;
  const sims: SimAgent[] = [];
  try {
    const [n0, n1] = lab.plan.nodes.map((n) => n.name) as [string, string];
    collector = await startCollector(
      collectorConfig({
        grpcListen: `unix:${lab.controlSocket}`,
        httpHost: '127.0.0.1',
        httpPort: 0,
        dbPath: join(tmp, 'c.db'),
        heartbeatIntervalMs: 1000,
        livenessTimeoutMs: 30_000,
        agentKeyFile: lab.agentKeyFile,
      }),
      log,
      lab.services,
    );
    const c = collector;
    lab.startAgents(c.grpcAddress);
    // Identities are required (the key is set): each real agent got in with its own node's token.
    await waitFor(`${lab.agentCount} agents`, () => c.registry.available().length === lab.agentCount, 60_000);
    const runDir = join('/run/cni-bench', id);
    const tokens = [n0, n1].map((n) => join(runDir, 'tokens', `${n}.token`));
    for (const f of [lab.agentKeyFile, ...tokens]) assert.equal(statSync(f).mode & 0o777, 0o600, `${f} is root's only`);
    const t0 = readFileSync(tokens[0]!, 'utf8');
    assert.notEqual(t0, readFileSync(tokens[1]!, 'utf8'), 'each node its own token');

    const sim = (token?: string): SimAgent => {
      const s = new SimAgent({ address: c.grpcAddress, ...(token ? { token } : {}) });
      sims.push(s);
      return s;
    };
    // n0's token claiming n1: refused, naming both.
    const claim = await sim(t0).register({ nodeName: n1, instanceId: 'impostor' });
    assert.ok('code' in claim, 'refused');
    assert.equal(claim.code, status.PERMISSION_DENIED);
    assert.match(claim.details, new RegExp(`identity of node '${n0}' cannot speak for node '${n1}'`));
    // No token, and a token minted with another key: no identity at all.
    for (const token of [undefined, nodeToken(Buffer.from('x'.repeat(64)), n1)]) {
      const r = await sim(token).register({ nodeName: n1, instanceId: 'impostor' });
      assert.ok('code' in r, 'refused');
      assert.equal(r.code, status.UNAUTHENTICATED, r.details);
    }
    // n0's token opening n1's session (taking its jobs): refused, and n1's own agent stays connected.
    const hijack = sim(t0);
    hijack.open(n1, c.registry.get(n1)?.info.instanceId ?? '');
    await waitFor('the hijack refused', async () => hijack.ended, 30_000);
    assert.ok(hijack.ended !== 'end' && hijack.ended?.code === status.PERMISSION_DENIED, String(hijack.ended));
    assert.equal(c.registry.get(n1)?.connected, true);
    assert.equal(c.registry.get(n1)?.info.instanceId !== 'impostor', true, 'n1 is still its own agent');
  } finally {
    for (const s of sims) s.client.close();
    await collector?.close();
    await lab.destroy();
  }
  assert.equal(existsSync(join('/run/cni-bench', id)), false, 'the key and tokens went with the lab');
  assert.deepEqual(labNamespaces(id), []);
  assert.deepEqual(labStateFiles(undefined, id), []);
});
