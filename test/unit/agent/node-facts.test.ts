/**
 * Node facts (issue 17 item 5): the fingerprint child's output parsed on real
 * captured output (a VM's virtio NIC, a pod's veth), truncated and empty
 * output refused naming node-facts, the one-line hardware summary for reports,
 * the real child run on this machine, and registration never held up long.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nodeFactsOnce, parseNodeFacts, readNodeFacts } from '../../../agent/node-facts.js';
import { createLogger } from '../../../core/log.js';
import { describeHardware, hardwareLine } from '../../../report/node-facts.js';
import { fixture } from '../../support/helpers/fixtures.js';

test('parses real output: a VM with virtio_net, and a pod interface on a veth', () => {
  const host = parseNodeFacts(fixture('node-facts/host.json'));
  assert.equal(host.nicDriver, 'virtio_net');
  assert.equal(host.podInterface, 'eth0');
  assert.ok(host.threads >= 1 && host.physicalCores >= 1);
  assert.ok(host.memoryBytes > 2 ** 30);
  const pod = parseNodeFacts(fixture('node-facts/pod-veth.json'));
  assert.equal(pod.nicDriver, 'veth');
  assert.equal(pod.mtu, 1500);
  assert.equal(pod.nicSpeedMbps, 10000);
});

test('truncated, empty or wrong-shaped output is an error naming node-facts, never empty facts', () => {
  assert.throws(
    () => parseNodeFacts(fixture('node-facts/truncated.json')),
    /node-facts: cannot parse output \(not JSON/,
  );
  assert.throws(() => parseNodeFacts(''), /node-facts: cannot parse output/);
  assert.throws(() => parseNodeFacts('{"cpuModel": 3}'), /node-facts: .*cpuModel/);
});

test('the hardware line names CPU, cores, governor, hypervisor, OS, memory and the NIC; nodes alike are said once', () => {
  const pod = parseNodeFacts(fixture('node-facts/pod-veth.json'));
  const line = hardwareLine(pod);
  assert.equal(
    line,
    'Intel Xeon® Processor, 2 cores / 2 threads, no cpufreq governor, VM (virtual machine), Debian GNU/Linux 12 (bookworm), 24 GiB; cnibnf1 veth 10000 Mbit/s MTU 1500',
  );
  assert.equal(
    describeHardware([
      { name: 'a', facts: pod },
      { name: 'b', facts: pod },
    ]),
    line,
  );
  const host = parseNodeFacts(fixture('node-facts/host.json'));
  const mixed = describeHardware([
    { name: 'a', facts: pod },
    { name: 'b', facts: host },
    { name: 'c', facts: undefined },
  ]);
  assert.match(mixed ?? '', /^a: .*veth.* \| b: .*virtio_net speed unknown MTU 1400 \| c: not reported$/);
  assert.equal(describeHardware([{ name: 'a', facts: undefined }]), undefined);
});

test('the real child reads this machine', async () => {
  const f = await readNodeFacts('127.0.0.1', 120_000);
  assert.equal(f.podInterface, 'lo');
  assert.ok(f.threads >= 1, JSON.stringify(f));
  assert.ok(f.cpuModel.length > 0);
});

test('registration waits for the facts at most waitMs, and gets them at the next one', async () => {
  const log = createLogger({ test: 'node-facts' }, 'error');
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const facts = parseNodeFacts(fixture('node-facts/host.json'));
  const once = nodeFactsOnce('192.0.2.2', log, 50, async () => {
    await gate;
    return facts;
  });
  assert.equal(await once(), undefined);
  release();
  await gate;
  assert.deepEqual(await once(), facts);
  let calls = 0;
  const failing = nodeFactsOnce('x', log, 1000, async () => {
    calls++;
    throw new Error('boom');
  });
  assert.equal(await failing(), undefined);
  assert.equal(await failing(), undefined);
  assert.equal(calls, 2, 'a failure is tried again at the next registration');
});
