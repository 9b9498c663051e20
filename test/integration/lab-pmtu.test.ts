/**
 * Path MTU in a real lab, with real ping DF probes from the client pod to the
 * server pod (node 1 to node 0): 1500 on the lab as built; 1400 once the
 * client node's uplink is narrowed to 1400 (standing in for an overlay's
 * encapsulation overhead: the node, as the pod's router, answers larger
 * packets with ICMP fragmentation-needed), not a black hole; and a black hole,
 * flagged, once that node's ICMP fragmentation-needed is dropped (iptables in
 * its OUTPUT chain; the drop is seen in the rule's counter, not assumed).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { probePathMtu } from '../../agent/observe/pmtu.js';
import { createLogger } from '../../core/log.js';
import { run } from '../../core/process.js';
import { Lab } from '../../lab/lab.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { dropFragNeededArgs } from '../support/helpers/icmp-drop.js';
import { notRoot } from '../support/helpers/root.js';

const ipIn = (ns: string, args: string[]) => run('ip', ['-n', ns, ...args], { tool: 'ip' });

test('PMTU: the effective MTU of a path, and a black hole flagged when ICMP fragmentation-needed is dropped', {
  skip: notRoot,
  timeout: 300_000,
}, async (t) => {
  const log = createLogger({ test: 'lab-pmtu' }, 'warn');
  const lab = await Lab.create({ nodes: 2, log, proxy: { mode: 'iptables', iptablesBackend: 'legacy' } });
  try {
    const [server, client] = lab.plan.nodes;
    const target = server?.pods[0]?.ip;
    const pod = client?.pods[0];
    assert.ok(client && target && pod);
    const from = `/run/netns/${pod.ns}`;
    /** A fresh source: re-adding the pod's default route drops the PMTU it cached. */
    const freshCache = async () => {
      await ipIn(pod.ns, ['route', 'del', 'default']);
      await ipIn(pod.ns, ['route', 'add', 'default', 'via', client.bridgeIp, 'dev', 'eth0']);
    };

    const wide = await probePathMtu(from, target, 1500);
    t.diagnostic(`as built: ${JSON.stringify({ ...wide, probes: wide.probes.length })}`);
    assert.deepEqual([wide.effectiveMtu, wide.blackHole], [1500, false]);

    await ipIn(client.ns, ['link', 'set', 'eth0', 'mtu', '1400']);
    await ipIn(lab.plan.fabricNs, ['link', 'set', `n${client.index}`, 'mtu', '1400']);
    await freshCache();
    const narrow = await probePathMtu(from, target, 1500);
    t.diagnostic(`uplink 1400: ${JSON.stringify({ ...narrow, probes: narrow.probes.length })}`);
    assert.deepEqual([narrow.effectiveMtu, narrow.blackHole, narrow.announcedMtu], [1400, false, 1400]);

    await run('ip', dropFragNeededArgs(client.ns, 'iptables-legacy'));
    await freshCache();
    const hole = await probePathMtu(from, target, 1500);
    t.diagnostic(`ICMP dropped: ${JSON.stringify(hole)}`);
    assert.equal(hole.effectiveMtu, 1400);
    assert.equal(hole.blackHole, true, 'silence above 1400 with room to 1500 is a black hole');
    assert.equal(hole.announcedMtu, undefined, 'no hop announced an MTU');
    const counters = await run('ip', ['netns', 'exec', client.ns, 'iptables-legacy', '-vnxL', 'OUTPUT'], {
      tool: 'iptables',
    });
    const dropped = /^\s*(\d+)\s+\d+\s+DROP\s+(?:icmp|1)\b/m.exec(counters.stdout);
    assert.ok(dropped && Number(dropped[1]) > 0, `the DROP rule saw the ICMP errors:\n${counters.stdout}`);
  } finally {
    await lab.destroy();
  }
  assert.deepEqual(labNamespaces(lab.plan.id), []);
});
