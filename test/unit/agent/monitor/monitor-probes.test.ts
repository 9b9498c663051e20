/**
 * Probes against a real responder on 127.0.0.1 (port 0): connect time, the
 * answering node checked, one kept connection for many requests, HTTP, and
 * every failure named: refused, timeout, wrong node, bad answers.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { httpServiceProbe, KeptConnection, tcpConnectProbe } from '../../../../agent/monitor/probes.js';
import { probeErrorReason } from '../../../../agent/monitor/protocol.js';
import { ProbeResponder } from '../../../../agent/monitor/responder.js';
import { freePort } from '../../../support/helpers/procs.js';

const incoming: string[] = [];
const responder = new ProbeResponder({
  node: 'node-b',
  port: 0,
  host: '127.0.0.1',
  idleTimeoutMs: 60_000,
  onIncoming: (s, kind) => incoming.push(`${kind}:${s}`),
});
let port = 0;
let revived: ProbeResponder | undefined;
/** Accepts and never answers. */
let silent: Server;
let silentPort = 0;
const held: Socket[] = [];

before(async () => {
  port = await responder.listen();
  silent = createServer((s) => held.push(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  silentPort = (silent.address() as { port: number }).port;
});
after(async () => {
  await responder.close();
  await revived?.close();
  for (const s of held) s.destroy();
  await new Promise((r) => silent.close(r));
});

async function reason(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return probeErrorReason(err);
  }
  return 'succeeded';
}

test('TCP connect: a positive time, the responder learns who probed it', async () => {
  const us = await tcpConnectProbe({ host: '127.0.0.1', port, node: 'node-b' }, 'node-a', 1000);
  assert.ok(us > 0 && us < 1_000_000, String(us));
  assert.ok(incoming.includes('tcp:node-a'));
});

test('a kept connection answers many requests on one socket', async () => {
  const c = new KeptConnection({ host: '127.0.0.1', port, node: 'node-b' }, 'node-a');
  const times = [];
  for (let i = 0; i < 20; i++) times.push(await c.requestResponse(1000));
  assert.ok(times.every((t) => t > 0));
  c.close();
  // The responder saw one hello for the twenty requests.
  assert.equal(incoming.filter((x) => x === 'tcp:node-a').length, 2);
});

test('HTTP: the answering node and its latency', async () => {
  const r = await httpServiceProbe('127.0.0.1', port, 'node-c', 1000);
  assert.equal(r.node, 'node-b');
  assert.ok(r.us > 0);
  assert.ok(incoming.includes('http:node-c'));
});

test('failures are named: wrong node, refused, timeout', async () => {
  assert.equal(
    await reason(tcpConnectProbe({ host: '127.0.0.1', port, node: 'node-x' }, 'node-a', 1000)),
    'wrong-node',
  );
  const closed = await freePort();
  assert.equal(
    await reason(tcpConnectProbe({ host: '127.0.0.1', port: closed, node: 'node-b' }, 'node-a', 1000)),
    'refused',
  );
  assert.equal(
    await reason(
      new KeptConnection({ host: '127.0.0.1', port: closed, node: 'node-b' }, 'node-a').requestResponse(1000),
    ),
    'refused',
  );
  const began = Date.now();
  assert.equal(
    await reason(tcpConnectProbe({ host: '127.0.0.1', port: silentPort, node: 'node-b' }, 'node-a', 300)),
    'timeout',
  );
  assert.equal(await reason(httpServiceProbe('127.0.0.1', silentPort, 'node-a', 300)), 'timeout');
  assert.ok(Date.now() - began < 2000, 'each failed within its timeout');
});

test('a kept connection that dies is reopened by the next probe', async () => {
  const c = new KeptConnection({ host: '127.0.0.1', port, node: 'node-b' }, 'node-a');
  await c.requestResponse(1000);
  await responder.close();
  assert.notEqual(await reason(c.requestResponse(300)), 'succeeded');
  revived = new ProbeResponder({ node: 'node-b', port, host: '127.0.0.1', idleTimeoutMs: 60_000 });
  await revived.listen();
  assert.ok((await c.requestResponse(1000)) > 0);
  c.close();
});
