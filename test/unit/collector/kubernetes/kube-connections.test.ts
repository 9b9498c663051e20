/**
 * reuseConnections against a real HTTPS server (openssl-made CA, server and
 * client certificates, mutual TLS as an apiserver asks): the stock client opens
 * a connection (and a full handshake) per call; with reuseConnections the same
 * calls share keep-alive connections, and a rotated client certificate gets a
 * fresh pool (the server checks which certificate each request came with).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { dispatcherKey, reuseConnections } from '../../../../collector/kubernetes/connections.js';
import { TestCerts } from '../../../support/helpers/test-certs.js';

const certs = new TestCerts('cnib-kconn-');
let server: Server;
let port = 0;
let handshakes = 0;
/** The client certificate's CN of each request, in order. */
const seenCn: string[] = [];

before(async () => {
  certs.ca('ca');
  certs.leaf('server', 'ca', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  certs.leaf('admin', 'ca', 'extendedKeyUsage=clientAuth\n', '/O=system:masters/CN=admin');
  certs.leaf('admin2', 'ca', 'extendedKeyUsage=clientAuth\n', '/O=system:masters/CN=admin2');
  server = createServer(
    {
      key: readFileSync(certs.file('server.key')),
      cert: readFileSync(certs.file('server.crt')),
      ca: readFileSync(certs.file('ca.crt')),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      seenCn.push(String((req.socket as import('node:tls').TLSSocket).getPeerCertificate().subject?.CN ?? ''));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ kind: 'NamespaceList', apiVersion: 'v1', metadata: {}, items: [] }));
    },
  );
  server.on('secureConnection', () => handshakes++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  certs.remove();
});

function kubeConfig(user = 'admin'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caFile: certs.file('ca.crt'), skipTLSVerify: false }],
    users: [{ name: 'u', certFile: certs.file(`${user}.crt`), keyFile: certs.file(`${user}.key`) }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

/** Handshakes the server saw for `calls` list calls, 8 at a time, through `kc`. */
async function handshakesFor(kc: KubeConfig, calls: number): Promise<number> {
  const api = kc.makeApiClient(CoreV1Api);
  const at = handshakes;
  for (let i = 0; i < calls; i += 8)
    await Promise.all(Array.from({ length: Math.min(8, calls - i) }, () => api.listNamespace()));
  return handshakes - at;
}

test('the stock client does a TLS handshake per call; reuseConnections keeps a pool per credentials', async () => {
  const stock = await handshakesFor(kubeConfig(), 80);
  assert.equal(stock, 80, 'client-node 2.x builds an Agent per request: if this changes, connections.ts may go');
  // undici may still drop an idle connection now and then: far fewer, not exactly 8.
  const pooled = await handshakesFor(reuseConnections(kubeConfig()), 80);
  assert.ok(pooled <= 40, `80 calls, 8 in flight, pooled: ${pooled} handshakes`);
});

test('a rotated client certificate is sent on new connections, never over the old ones', async () => {
  const kc = reuseConnections(kubeConfig());
  await handshakesFor(kc, 8);
  // The same KubeConfig now holding another certificate (a rotation).
  const again = kubeConfig('admin2');
  kc.loadFromOptions({
    clusters: again.clusters,
    users: again.users,
    contexts: again.contexts,
    currentContext: again.currentContext,
  });
  const from = seenCn.length;
  const opened = await handshakesFor(kc, 8);
  assert.ok(opened >= 1);
  assert.deepEqual(new Set(seenCn.slice(from)), new Set(['admin2']), 'every request after the rotation');
});

test('dispatcherKey: server, user and TLS material decide; equal content, equal key', () => {
  const a = { ca: Buffer.from('CA'), cert: Buffer.from('C1'), key: Buffer.from('K') };
  const base = dispatcherKey({ server: 'https://x' }, 'u', a);
  assert.equal(dispatcherKey({ server: 'https://x' }, 'u', { ...a, ca: Buffer.from('CA') }), base);
  assert.notEqual(dispatcherKey({ server: 'https://x' }, 'u', { ...a, cert: Buffer.from('C2') }), base);
  assert.notEqual(dispatcherKey({ server: 'https://y' }, 'u', a), base);
  assert.notEqual(dispatcherKey({ server: 'https://x' }, 'v', a), base);
});
