/**
 * The API contract (issue 17 item 6) against the real collector binary on port
 * 0 with two real agents: the OpenAPI document passes a real OpenAPI 3.1
 * validator, every operation in it is called and its answer checked against
 * the schema the document gives (status, media type, body), errors are
 * problem details naming the field, 201 carries Location, 405 carries Allow,
 * the list endpoints page with tokens, and gRPC reflection answers grpcurl
 * (when built) and a reflection client.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { type CollectorMain, startCollectorMain } from '../support/helpers/collector-main.js';
import { AGENT_MAIN, freePort, type Proc, startNode, stop, waitFor } from '../support/helpers/procs.js';
import { ReflectionClient } from './reflection-client.js';

const GRPCURL = '/var/cache/cni-bench/tools/bin/grpcurl';
let c: CollectorMain;
const agents: Proc[] = [];
let doc: any;
let resolved: any;
const called = new Set<string>();
const ajv = new Ajv2020({ strict: false, allErrors: true });

interface Answer {
  status: number;
  type: string;
  headers: Headers;
  body: any;
}

/** Calls an operation of the document and checks the answer against what the document says of it. */
async function call(method: string, template: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const op = resolved.paths[template]?.[method.toLowerCase()];
  assert.ok(op, `${method} ${template} is not in the document`);
  called.add(`${method} ${template}`);
  const r = await fetch(`${c.http}${path}`, { ...init, method });
  const text = await r.text();
  const type = (r.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  const documented = op.responses[String(r.status)] ?? op.responses.default;
  assert.ok(documented, `${method} ${path}: status ${r.status} not documented: ${text.slice(0, 300)}`);
  if (r.status !== 204) {
    const media = documented.content?.[type];
    assert.ok(media, `${method} ${path}: ${r.status} answered ${type}, documented ${Object.keys(documented.content)}`);
    if (media.schema) {
      const body = JSON.parse(text);
      const ok = ajv.validate(media.schema, body);
      assert.ok(ok, `${method} ${path}: ${JSON.stringify(ajv.errors)} in ${text.slice(0, 300)}`);
    }
  }
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Markdown, CSV, metrics.
  }
  return { status: r.status, type, headers: r.headers, body };
}

const post = (body: unknown): Promise<Answer> =>
  call('POST', '/v1/runs', '/v1/runs', { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

async function untilEnded(id: string): Promise<any> {
  return waitFor(
    `run ${id} to end`,
    async () => {
      const r = await call('GET', '/v1/runs/{id}', `/v1/runs/${id}`);
      return ['succeeded', 'failed', 'cancelled', 'interrupted'].includes(r.body.state) ? r.body : undefined;
    },
    120_000,
    250,
  );
}

const SCENARIO = {
  serverNode: 'node-a',
  clientNode: 'node-b',
  warmupSeconds: 0,
  durationSeconds: 1,
  rounds: 1,
  measurements: [{ kind: 'throughput', path: 'pod-to-pod' }],
};

before(async () => {
  c = await startCollectorMain([]);
  for (const node of ['node-a', 'node-b']) {
    const health = await freePort();
    const args = ['--collector', c.grpc, '--node-name', node, '--pod-ip', '127.0.0.1', '--health-port', String(health)];
    agents.push(startNode(AGENT_MAIN, args));
  }
  await waitFor(
    'two connected agents',
    async () => {
      const r = await fetch(`${c.http}/v1/agents`);
      return ((await r.json()) as any).agents.filter((a: any) => a.connected).length === 2;
    },
    120_000,
    250,
  );
  doc = await (await fetch(`${c.http}/v1/openapi.json`)).json();
});

after(async () => {
  await Promise.all(agents.map((a) => stop(a)));
  await stop(c?.proc);
});

describe('the OpenAPI document', () => {
  test('is valid OpenAPI 3.1 by a real validator, and generated from the scenario schema', async () => {
    const v = new Validator();
    const r = await v.validate(structuredClone(doc));
    assert.ok(r.valid, JSON.stringify(r.errors, null, 1)?.slice(0, 3000));
    assert.equal(v.version, '3.1');
    resolved = v.resolveRefs();
    const body = doc.paths['/v1/runs'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(body.properties.measurements.items.oneOf.map((m: any) => m.properties.kind.const).sort(), [
      'disruption',
      'http',
      'rr',
      'throughput',
    ]);
    assert.equal(body.properties.rounds.default, 3);
    assert.equal(body.additionalProperties, false);
  });
});

describe('every route in the document, against the real collector', () => {
  test('health, metrics, the document itself, monitor and cluster', async () => {
    assert.equal((await call('GET', '/healthz', '/healthz')).body.status, 'ok');
    assert.match((await call('GET', '/metrics', '/metrics')).body, /cni_bench_/);
    assert.equal((await call('GET', '/v1/openapi.json', '/v1/openapi.json')).body.openapi, '3.1.0');
    assert.ok(Array.isArray((await call('GET', '/v1/monitor', '/v1/monitor')).body.nodes));
    assert.equal((await call('GET', '/v1/cluster', '/v1/cluster')).status, 200);
  });

  test('agents page by token; a token the server did not write is a problem naming pageToken', async () => {
    const first = await call('GET', '/v1/agents', '/v1/agents?limit=1');
    assert.equal(first.body.agents.length, 1);
    assert.ok(first.body.nextPageToken);
    const second = await call('GET', '/v1/agents', `/v1/agents?limit=1&pageToken=${first.body.nextPageToken}`);
    assert.equal(second.body.agents.length, 1);
    assert.equal(second.body.nextPageToken, '');
    assert.deepEqual([first.body.agents[0].nodeName, second.body.agents[0].nodeName].sort(), ['node-a', 'node-b']);
    // Node facts from registration (issue 17 item 5): the pod IP 127.0.0.1 is on lo.
    const facts = first.body.agents[0].nodeFacts;
    assert.ok(facts && facts.threads >= 1 && facts.cpuModel, JSON.stringify(first.body.agents[0]));
    assert.equal(facts.podInterface, 'lo');
    const bad = await call('GET', '/v1/agents', '/v1/agents?pageToken=bm9wZQ');
    assert.equal(bad.status, 400);
    assert.equal(bad.type, 'application/problem+json');
    assert.equal(bad.body.field, 'pageToken');
  });

  test('a bad scenario is a 400 problem with the field path of each error', async () => {
    const r = await post({ rounds: 0, measurements: [{ kind: 'throughput', path: 'pod-to-pod', streams: 0 }] });
    assert.equal(r.status, 400);
    assert.equal(r.type, 'application/problem+json');
    assert.equal(r.body.type, 'urn:cni-bench:problem:E_VALIDATION');
    assert.equal(r.body.status, 400);
    assert.equal(r.body.instance, '/v1/runs');
    assert.deepEqual(r.body.errors.map((e: any) => e.path).sort(), ['measurements[0].streams', 'rounds']);
    assert.ok(['rounds', 'measurements[0].streams'].includes(r.body.field));
    const q = await call('GET', '/v1/runs', '/v1/runs?limit=1e3');
    assert.equal(q.status, 400);
    assert.equal(q.body.field, 'limit');
    const unknown = await call('GET', '/v1/runs', '/v1/runs?limt=5');
    assert.equal(unknown.body.field, 'limt');
  });

  test('runs: 201 with Location, pages by token, report, compare, cancel', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const created = await post({ ...SCENARIO, name: `contract-${i}` });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.headers.get('location'), `/v1/runs/${created.body.id}`);
      const same = await call('GET', '/v1/runs/{id}', created.headers.get('location') as string);
      assert.equal(same.body.id, created.body.id);
      const ended = await untilEnded(created.body.id);
      assert.equal(ended.state, 'succeeded', JSON.stringify(ended));
      ids.push(created.body.id);
    }
    // A third run, cancelled while it runs.
    const long = await post({ ...SCENARIO, name: 'contract-cancel', durationSeconds: 60 });
    assert.equal(long.status, 201, JSON.stringify(long.body));
    const busy = await post(SCENARIO);
    assert.equal(busy.status, 409);
    assert.equal(busy.type, 'application/problem+json');
    const cancel = await call('DELETE', '/v1/runs/{id}', `/v1/runs/${long.body.id}`);
    assert.equal(cancel.status, 202);
    assert.equal((await untilEnded(long.body.id)).state, 'cancelled');
    assert.equal((await call('DELETE', '/v1/runs/{id}', `/v1/runs/${long.body.id}`)).status, 409);
    assert.equal((await call('GET', '/v1/runs/{id}', '/v1/runs/no-such-run')).body.field, 'id');

    // Pages of one, newest first, end to end: every run once, in the order of the whole list.
    const all = (await call('GET', '/v1/runs', '/v1/runs?limit=1000')).body.runs.map((r: any) => r.id);
    assert.deepEqual(all.slice(0, 3), [long.body.id, ids[1], ids[0]]);
    const paged: string[] = [];
    let token = '';
    do {
      const page = await call('GET', '/v1/runs', `/v1/runs?limit=1${token ? `&pageToken=${token}` : ''}`);
      paged.push(...page.body.runs.map((r: any) => r.id));
      token = page.body.nextPageToken;
    } while (token && paged.length <= all.length);
    assert.deepEqual(paged, all);

    const md = await call('GET', '/v1/runs/{id}/report', `/v1/runs/${ids[0]}/report?format=md`);
    assert.equal(md.type, 'text/markdown');
    assert.match(md.body, /^Cluster: .*; hardware .+ cores \/ \d+ threads.*; lo /m);
    const json = await call('GET', '/v1/runs/{id}/report', `/v1/runs/${ids[0]}/report`);
    assert.equal(json.body.rows[0].tool, 'iperf3');
    const html = await call('GET', '/v1/runs/{id}/report', `/v1/runs/${ids[0]}/report?format=html`);
    assert.equal(html.type, 'text/html');
    const badFormat = await call('GET', '/v1/runs/{id}/report', `/v1/runs/${ids[0]}/report?format=pdf`);
    assert.equal(badFormat.body.field, 'format');
    const cmp = await call('GET', '/v1/compare', `/v1/compare?runs=${ids.join(',')}&format=json`);
    assert.equal(cmp.status, 200);
    assert.equal(cmp.body.runs.length, 2);
    assert.match(cmp.body.runs[0].cluster.hardware, /threads/);
    const csv = await call('GET', '/v1/compare', `/v1/compare?runs=${ids.join(',')}&format=csv`);
    assert.equal(csv.type, 'text/csv');
    assert.equal((await call('GET', '/v1/compare', '/v1/compare?runs=x')).body.field, 'runs');
  });

  test('a method a path does not serve is a 405 problem with Allow; OPTIONS answers Allow', async () => {
    const r = await fetch(`${c.http}/v1/runs`, { method: 'PUT' });
    assert.equal(r.status, 405);
    assert.equal(r.headers.get('content-type'), 'application/problem+json');
    assert.deepEqual(r.headers.get('allow')?.split(', ').sort(), ['GET', 'POST']);
    const one = await fetch(`${c.http}/v1/runs/x`, { method: 'POST' });
    assert.deepEqual(one.headers.get('allow')?.split(', ').sort(), ['DELETE', 'GET']);
    const o = await fetch(`${c.http}/v1/runs/x/report`, { method: 'OPTIONS' });
    assert.equal(o.status, 204);
    assert.equal(o.headers.get('allow'), 'GET');
    const none = await fetch(`${c.http}/v1/nothing`);
    assert.equal(none.status, 404);
    assert.equal(none.headers.get('content-type'), 'application/problem+json');
  });

  test('every operation in the document was called', () => {
    const ops = Object.entries(doc.paths).flatMap(([p, item]: [string, any]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`),
    );
    assert.ok(ops.length >= 11, ops.join(', '));
    assert.deepEqual(
      ops.filter((o) => !called.has(o)),
      [],
    );
  });
});

describe('gRPC server reflection', () => {
  const SERVICES = [
    'cnibench.v1.AgentService',
    'cnibench.v1.MonitorService',
    'cnibench.v1.RunService',
    'grpc.health.v1.Health',
  ];

  test('a reflection client lists the services and gets the descriptor of RunService', async () => {
    const r = new ReflectionClient(c.grpc);
    try {
      const names = await r.listServices();
      for (const s of SERVICES) assert.ok(names.includes(s), names.join(', '));
      const files = await r.fileContainingSymbol('cnibench.v1.RunService');
      assert.ok(files.some((f) => f.toString('latin1').includes('CreateRun')));
    } finally {
      r.close();
    }
  });

  test('grpcurl lists, describes and calls through reflection', {
    skip: !existsSync(GRPCURL) && 'grpcurl not built',
  }, () => {
    const grpcurl = (...args: string[]): string =>
      execFileSync(GRPCURL, ['-plaintext', ...args], { encoding: 'utf8', timeout: 60_000 });
    const list = grpcurl(c.grpc, 'list');
    for (const s of SERVICES) assert.match(list, new RegExp(`^${s.replace(/\./g, '\\.')}$`, 'm'));
    assert.match(grpcurl(c.grpc, 'describe', 'cnibench.v1.RunService'), /rpc ListRuns/);
    const runs = JSON.parse(grpcurl('-d', '{"limit": 2}', c.grpc, 'cnibench.v1.RunService/ListRuns'));
    assert.ok(Array.isArray(runs.runs) && runs.runs.length > 0, JSON.stringify(runs));
  });
});
