/**
 * Transport security with real certificates: a CA, a server certificate
 * (SAN 127.0.0.1 and localhost) and client certificates made with the openssl
 * CLI; a real collector with TLS, then mutual TLS, on port 0; real agent
 * processes that register over it; and clients the collector must refuse. Also
 * the REST bearer token, with the probe and scrape endpoints left open.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, test } from 'node:test';
import {
  type ChannelCredentials,
  type ChannelOptions,
  credentials,
  Metadata,
  makeGenericClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { linkCredentials } from '../../agent/link-credentials.js';
import type { collectorConfig } from '../../collector/config.js';
import type { Collector } from '../../collector/index.js';
import { createLogger } from '../../core/log.js';
import { startLoopbackAgent, startLoopbackCollector } from '../support/helpers/loopback.js';
import { freePort, getJson, type Proc, stop, waitFor } from '../support/helpers/procs.js';
import { TestCerts } from '../support/helpers/test-certs.js';

const certs = new TestCerts('cnib-tls-');
const file = (name: string): string => certs.file(name);
const TOKEN = 's3cret-token-for-tests';
const log = createLogger({ test: 'tls' }, 'warn');
const agents: Proc[] = [];

before(() => {
  certs.ca('ca');
  certs.ca('other-ca');
  certs.leaf('server', 'ca', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  certs.leaf('client', 'ca', 'extendedKeyUsage=clientAuth\n');
  // An agent's own identity: organisation cni-bench-agent, CN its node.
  certs.leaf('mtls-a', 'ca', 'extendedKeyUsage=clientAuth\n', '/O=cni-bench-agent/CN=mtls-a');
  certs.leaf('stranger', 'other-ca', 'extendedKeyUsage=clientAuth\n');
  writeFileSync(file('token'), `${TOKEN}\n`);
});

after(async () => {
  await Promise.all(agents.map((a) => stop(a)));
  certs.remove();
});

function collectorWith(extra: Partial<Parameters<typeof collectorConfig>[0]>): Promise<Collector> {
  return startLoopbackCollector(log, extra);
}

/** grpc.health.v1 Check over the given credentials: the status, or the error the channel gave. */
async function healthCheck(
  address: string,
  creds: ChannelCredentials,
  options: ChannelOptions = {},
): Promise<string | ServiceError> {
  const Health = makeGenericClientConstructor(healthService, 'grpc.health.v1.Health');
  const client = new Health(address, creds, options) as any;
  try {
    return await new Promise((resolve) =>
      client.check(
        { service: '' },
        new Metadata(),
        { deadline: Date.now() + 5000 },
        (e: ServiceError | null, r: { status: string }) => resolve(e ?? r.status),
      ),
    );
  } finally {
    client.close();
  }
}

function assertRefused(r: string | ServiceError, why: string): void {
  assert.notEqual(r, 'SERVING', why);
  assert.equal((r as ServiceError).code, 14, `${why}: ${(r as ServiceError).details}`);
}

async function startAgent(c: Collector, node: string, tlsArgs: string[]): Promise<Proc> {
  const port = await freePort();
  const p = startLoopbackAgent(c.grpcAddress, node, port, tlsArgs);
  agents.push(p);
  return p;
}

async function waitConnected(c: Collector, node: string, agent: Proc): Promise<void> {
  await waitFor(
    `agent ${node} connected over TLS`,
    () => c.registry.list().some((a) => a.info.nodeName === node && a.connected),
    20_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\nagent output:\n${agent.output()}`);
  });
}

describe('gRPC over TLS with a bearer-token REST API', () => {
  let c: Collector;
  before(async () => {
    c = await collectorWith({
      tlsCertFile: file('server.crt'),
      tlsKeyFile: file('server.key'),
      restTokenFile: file('token'),
    });
  });
  after(() => c.close());

  test('an agent given the CA registers over TLS', async () => {
    const agent = await startAgent(c, 'tls-a', ['--tls-ca-file', file('ca.crt')]);
    await waitConnected(c, 'tls-a', agent);
    const { status, body } = await getJson(`${c.httpUrl}/v1/agents`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(status, 200);
    assert.ok(
      body.agents.some((a: any) => a.nodeName === 'tls-a' && a.connected),
      JSON.stringify(body),
    );
  });

  test('a plaintext client, and a TLS client that does not trust the CA, are refused', async () => {
    assertRefused(await healthCheck(c.grpcAddress, credentials.createInsecure()), 'plaintext');
    assertRefused(await healthCheck(c.grpcAddress, credentials.createSsl(null)), 'system roots only');
    const other = linkCredentials({
      tlsCaFile: file('other-ca.crt'),
      tlsCertFile: '',
      tlsKeyFile: '',
      tlsServerName: '',
    });
    assertRefused(await healthCheck(c.grpcAddress, other.credentials, other.options), 'wrong CA');
    const ok = linkCredentials({ tlsCaFile: file('ca.crt'), tlsCertFile: '', tlsKeyFile: '', tlsServerName: '' });
    assert.equal(await healthCheck(c.grpcAddress, ok.credentials, ok.options), 'SERVING');
  });

  test('the server name override is what the certificate is checked against', async () => {
    const asLocalhost = linkCredentials({
      tlsCaFile: file('ca.crt'),
      tlsCertFile: '',
      tlsKeyFile: '',
      tlsServerName: 'localhost',
    });
    assert.equal(await healthCheck(c.grpcAddress, asLocalhost.credentials, asLocalhost.options), 'SERVING');
    const wrong = linkCredentials({
      tlsCaFile: file('ca.crt'),
      tlsCertFile: '',
      tlsKeyFile: '',
      tlsServerName: 'collector.example',
    });
    assertRefused(await healthCheck(c.grpcAddress, wrong.credentials, wrong.options), 'name not in the certificate');
  });

  test('/v1/* needs the bearer token: none or a wrong one gets 401, the right one 200', async () => {
    const runs = `${c.httpUrl}/v1/runs`;
    for (const [why, headers] of [
      ['no token', {}],
      ['wrong token', { authorization: 'Bearer not-the-token' }],
      ['token as a prefix', { authorization: `Bearer ${TOKEN}x` }],
      ['another scheme', { authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` }],
    ] as [string, Record<string, string>][]) {
      const r = await fetch(runs, { headers });
      assert.equal(r.status, 401, why);
      assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer\b/, why);
      const body = (await r.json()) as { code: string; message: string };
      assert.equal(body.code, 'E_UNAUTHENTICATED', why);
    }
    const ok = await getJson(runs, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body.runs, []);
    // Routes are not revealed, and bodies not read, before authentication.
    assert.equal((await getJson(`${c.httpUrl}/v1/nope`)).status, 401);
    assert.equal((await getJson(runs, { method: 'POST', body: '{' })).status, 401);
  });

  test('/healthz and /metrics stay open for probes and scrapes', async () => {
    const h = await getJson(`${c.httpUrl}/healthz`);
    assert.equal(h.status, 200);
    assert.equal(h.body.status, 'ok');
    const m = await getJson(`${c.httpUrl}/metrics`);
    assert.equal(m.status, 200);
    assert.match(m.body as string, /^cni_bench_agents_connected /m);
  });
});

describe('gRPC over mutual TLS', () => {
  let c: Collector;
  before(async () => {
    c = await collectorWith({
      tlsCertFile: file('server.crt'),
      tlsKeyFile: file('server.key'),
      tlsCaFile: file('ca.crt'),
    });
  });
  after(() => c.close());

  test('an agent with its node\u2019s certificate the CA signed registers', async () => {
    const agent = await startAgent(c, 'mtls-a', [
      '--tls-ca-file',
      file('ca.crt'),
      '--tls-cert-file',
      file('mtls-a.crt'),
      '--tls-key-file',
      file('mtls-a.key'),
      '--tls-server-name',
      'localhost',
    ]);
    await waitConnected(c, 'mtls-a', agent);
  });

  test('a client without a certificate, or with one from another CA, is refused', async () => {
    const noCert = linkCredentials({ tlsCaFile: file('ca.crt'), tlsCertFile: '', tlsKeyFile: '', tlsServerName: '' });
    assertRefused(await healthCheck(c.grpcAddress, noCert.credentials, noCert.options), 'no client certificate');
    const stranger = linkCredentials({
      tlsCaFile: file('ca.crt'),
      tlsCertFile: file('stranger.crt'),
      tlsKeyFile: file('stranger.key'),
      tlsServerName: '',
    });
    assertRefused(
      await healthCheck(c.grpcAddress, stranger.credentials, stranger.options),
      'client certificate from another CA',
    );
    assertRefused(await healthCheck(c.grpcAddress, credentials.createInsecure()), 'plaintext');
    const ok = linkCredentials({
      tlsCaFile: file('ca.crt'),
      tlsCertFile: file('client.crt'),
      tlsKeyFile: file('client.key'),
      tlsServerName: '',
    });
    assert.equal(await healthCheck(c.grpcAddress, ok.credentials, ok.options), 'SERVING');
  });
});

test('REST over TLS: the token travels encrypted, a plaintext request gets no answer', async () => {
  const c = await collectorWith({
    tlsCertFile: file('server.crt'),
    tlsKeyFile: file('server.key'),
    restTokenFile: file('token'),
    restTls: 'true',
  });
  try {
    assert.match(c.httpUrl, /^https:\/\//);
    const get = (path: string, token?: string): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const req = httpsRequest(
          `${c.httpUrl}${path}`,
          { ca: readFileSync(file('ca.crt')), headers: token ? { authorization: `Bearer ${token}` } : {} },
          (res) => {
            let body = '';
            res.on('data', (d) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    assert.equal((await get('/v1/runs', TOKEN)).status, 200);
    assert.equal((await get('/v1/runs')).status, 401);
    assert.equal((await get('/healthz')).status, 200);
    await assert.rejects(
      fetch(`${c.httpUrl.replace('https:', 'http:')}/healthz`, { signal: AbortSignal.timeout(5000) }),
    );
  } finally {
    await c.close();
  }
});

test('a collector whose TLS or token file cannot be read does not start, and says which field and path', async () => {
  const missing = file('absent.pem');
  await assert.rejects(
    collectorWith({ tlsCertFile: missing, tlsKeyFile: file('server.key') }),
    (err: Error & { code?: string }) => {
      assert.equal(err.code, 'E_VALIDATION');
      assert.ok(err.message.includes(`tlsCertFile: cannot read '${missing}'`), err.message);
      return true;
    },
  );
  writeFileSync(file('empty-token'), '\n');
  await assert.rejects(
    collectorWith({ restTokenFile: file('empty-token') }),
    /restTokenFile: '.*empty-token' is empty/,
  );
});
