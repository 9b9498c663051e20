import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Server, ServerCredentials, type ServerUnaryCall, type ServerWritableStream } from '@grpc/grpc-js';
import { flowsAsked, MAX_FLOWS, readHubble } from '../../../../agent/observe/hubble-reader.js';
import { fixture, repoRoot } from '../../../support/helpers/fixtures.js';

// Captured answers of real cilium-agents v1.20.2 (test/fixtures/README.md, hubble/), replayed over real sockets:
// the cilium-agent API over HTTP on a unix socket, the observer over gRPC on hubble.sock beside it.
const bin = (name: string): Buffer => readFileSync(join(repoRoot, 'test', 'fixtures', 'hubble', name));
const flowLines = (node: string): Buffer[] =>
  fixture(`hubble/get-flows-${node}.b64`)
    .trim()
    .split('\n')
    .map((l) => Buffer.from(l, 'base64'));
const SERVER = '198.18.16.68';
const CLIENT = '198.18.17.76';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const identity = (b: Buffer): Buffer => b;
const method = (path: string, responseStream: boolean) => ({
  path,
  requestStream: false,
  responseStream,
  requestSerialize: identity,
  requestDeserialize: identity,
  responseSerialize: identity,
  responseDeserialize: identity,
});

/** A cilium-agent run dir: cilium.sock answering GET /v1/debuginfo with `debuginfo`, and hubble.sock when `observer` is given. */
async function agentDir(
  debuginfo: string,
  observer?: { status: Buffer; flows: Buffer[] },
): Promise<{ socket: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'cnib-hubble-'));
  dirs.push(dir);
  const api = createServer((req, res) => {
    res.writeHead(req.url === '/v1/debuginfo' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(debuginfo);
  });
  await new Promise<void>((r) => api.listen(join(dir, 'cilium.sock'), r));
  let grpc: Server | undefined;
  if (observer) {
    grpc = new Server();
    grpc.addService(
      {
        ServerStatus: method('/observer.Observer/ServerStatus', false),
        GetFlows: method('/observer.Observer/GetFlows', true),
      },
      {
        ServerStatus: (_c: ServerUnaryCall<Buffer, Buffer>, cb: (e: null, b: Buffer) => void) =>
          cb(null, observer.status),
        GetFlows: (call: ServerWritableStream<Buffer, Buffer>) => {
          for (const f of observer.flows) call.write(f);
          call.end();
        },
      },
    );
    await new Promise<void>((res, rej) =>
      grpc?.bindAsync(`unix://${join(dir, 'hubble.sock')}`, ServerCredentials.createInsecure(), (e) =>
        e ? rej(e) : res(),
      ),
    );
  }
  return {
    socket: join(dir, 'cilium.sock'),
    close: async () => {
      api.close();
      grpc?.forceShutdown();
    },
  };
}

const agentAt = (socket: string) => ({
  version: '1.20.2',
  versionFull: '1.20.2',
  kubeProxyReplacement: '',
  routing: '',
  tunnelProtocol: '',
  socket,
  agentPid: 1,
});

test('GetFlows is asked for a bounded number of flows, and only with an address', () => {
  assert.equal(flowsAsked({ flowsTo: '', flows: 50 }), 0);
  assert.equal(flowsAsked({ flowsTo: SERVER, flows: 0 }), 100);
  assert.equal(flowsAsked({ flowsTo: SERVER, flows: 20 }), 20);
  assert.equal(flowsAsked({ flowsTo: SERVER, flows: 1e6 }), MAX_FLOWS);
});

test("a node with Hubble on: the agent's state, the observer's live counter and the clients' flows to the server", async () => {
  const a = await agentDir(fixture('hubble/debuginfo-hubble-on.json'), {
    status: bin('server-status-lab-n0.bin'),
    flows: flowLines('lab-n0'),
  });
  try {
    const r = await readHubble('lab-n0', agentAt(a.socket), { flowsTo: SERVER, flows: 20 }, []);
    assert.equal(r.state, 'Ok');
    assert.equal(r.observerAnswered, true);
    assert.equal(r.seenFlows, 40, 'the live ServerStatus counter, not the snapshot (7) in debuginfo');
    assert.equal(r.maxFlows, 4095);
    assert.ok(r.flows.length > 0 && r.flows.every((f) => f.destination === SERVER));
    assert.ok(r.flows.some((f) => f.source === CLIENT));
    assert.deepEqual(r.errors, []);
    assert.equal(r.socket, a.socket.replace(/cilium\.sock$/, 'hubble.sock'));
  } finally {
    await a.close();
  }
});

test('a node with Hubble off: the state as the agent says it, and no observer answering is a named error, not a zero', async () => {
  // The captured answer with Hubble's part as a Hubble-off agent gives it (state Disabled, no observer).
  const doc = JSON.parse(fixture('hubble/debuginfo-hubble-on.json'));
  doc['cilium-status'].hubble = { state: 'Disabled' };
  const off = JSON.stringify(doc);
  const a = await agentDir(off);
  try {
    const r = await readHubble('lab-n1', agentAt(a.socket), { flowsTo: SERVER, flows: 20 }, []);
    assert.equal(r.state, 'Disabled');
    assert.equal(r.observerAnswered, false);
    assert.match(r.errors.join('\n'), /observer ServerStatus: hubble observer: no Hubble socket at .*hubble\.sock/);
    assert.deepEqual(r.flows, []);
  } finally {
    await a.close();
  }
});

test('truncated answers are errors naming the observer or the API; a node without a cilium-agent says so', async () => {
  const a = await agentDir('{"cilium-status": {"hubble"', {
    status: bin('server-status-truncated.bin'),
    flows: [],
  });
  try {
    const r = await readHubble('lab-n0', agentAt(a.socket), { flowsTo: SERVER, flows: 20 }, []);
    assert.equal(r.state, '');
    assert.equal(r.observerAnswered, false);
    assert.match(r.errors[0] ?? '', /Hubble state: .*cilium-agent API/);
    assert.match(r.errors[1] ?? '', /observer ServerStatus: .*hubble observer/);
  } finally {
    await a.close();
  }
  const b = await agentDir(fixture('hubble/debuginfo-hubble-on.json'), {
    status: bin('server-status-lab-n0.bin'),
    flows: [bin('get-flows-truncated.bin')],
  });
  try {
    const r = await readHubble('lab-n0', agentAt(b.socket), { flowsTo: SERVER, flows: 20 }, []);
    assert.equal(r.observerAnswered, true);
    assert.deepEqual(r.flows, []);
    assert.match(r.errors.join('\n'), /observer GetFlows: .*hubble observer/);
  } finally {
    await b.close();
  }
  const none = await readHubble('lab-n2', undefined, { flowsTo: SERVER, flows: 20 }, [
    'cilium-agent (pid 9) API not read',
  ]);
  assert.deepEqual(none.errors, ['no cilium-agent API on this node: cilium-agent (pid 9) API not read']);
  assert.equal(none.state, '');
});
