import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseCiliumFeatures } from '../../../../agent/observe/cilium-features.js';
import {
  flowsRequest,
  hubbleServerStatus,
  parseFlowsResponse,
  parseServerStatus,
} from '../../../../agent/observe/hubble-observer.js';
import { flowsFromClients } from '../../../../lab/policy/hubble.js';
import { fixture, repoRoot } from '../../../support/helpers/fixtures.js';

const bin = (name: string): Buffer => readFileSync(join(repoRoot, 'test', 'fixtures', 'hubble', name));
const flowsOf = (node: string) =>
  fixture(`hubble/get-flows-${node}.b64`)
    .trim()
    .split('\n')
    .map((l) => parseFlowsResponse(Buffer.from(l, 'base64')));

// The capture: 5 connection attempts from lab-n1-p1 (198.18.17.76) to cni-bench-agent-0 (198.18.16.68) port 39099.
const SERVER = '198.18.16.68';
const CLIENT = '198.18.17.76';

test("the observer's live counters come from a real ServerStatus answer; a truncated one is a parse error naming the observer", () => {
  assert.deepEqual(parseServerStatus(bin('server-status-lab-n0.bin')), {
    numFlows: 54,
    maxFlows: 4095,
    seenFlows: 40,
    uptimeNs: 19_387_733_615,
  });
  assert.throws(
    () => parseServerStatus(bin('server-status-truncated.bin')),
    (e: Error) => /^hubble observer: cannot parse output \(ServerStatusResponse/.test(e.message),
  );
});

test("GetFlows answers from both nodes: every flow is the client's traffic to the server, as Hubble saw it on each side", () => {
  for (const node of ['lab-n0', 'lab-n1']) {
    const flows = flowsOf(node);
    assert.equal(flows.length, 15, node);
    for (const f of flows) assert.equal(f?.destination, SERVER);
    assert.ok(
      flows.every((f) => f?.nodeName.endsWith(node)),
      `${node}: ${flows.map((f) => f?.nodeName)}`,
    );
    const seen = flowsFromClients(
      flows.filter((f) => f !== null),
      SERVER,
      [CLIENT],
    );
    assert.deepEqual(seen.from, [CLIENT]);
    assert.equal(
      flowsFromClients(
        flows.filter((f) => f !== null),
        SERVER,
        ['198.18.17.1'],
      ).matched.length,
      0,
    );
  }
  assert.throws(
    () => parseFlowsResponse(bin('get-flows-truncated.bin')),
    (e: Error) => /^hubble observer: cannot parse output \(GetFlowsResponse/.test(e.message),
  );
});

test('the GetFlows request asks for the last N flows to one address (whitelist destination_ip)', () => {
  // field 1 varint 200, field 6 { field 3 "198.18.16.68" }
  assert.equal(
    Buffer.from(flowsRequest(SERVER, 200)).toString('hex'),
    `08c801320e1a0c${Buffer.from(SERVER).toString('hex')}`,
  );
});

test("the agent's own status with Hubble on (real GET /v1/debuginfo): state Ok with a seen-flows counter", () => {
  assert.deepEqual(parseCiliumFeatures(fixture('hubble/debuginfo-hubble-on.json')), {
    hubble: 'Ok',
    seenFlows: 7,
    encryption: 'Disabled',
  });
});

test('an absent hubble.sock (Hubble off) is an error naming the observer, never a zero', async () => {
  await assert.rejects(hubbleServerStatus('/nonexistent/hubble.sock'), /hubble observer: no Hubble socket/);
});
